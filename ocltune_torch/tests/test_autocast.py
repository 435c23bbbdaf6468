"""torch.autocast(device_type="ocl"): the casts PyTorch's CUDA autocast makes (its op lists), in strict
mode, against torch.autocast on the CPU with the same inputs; GradScaler's device ops against the CPU's."""

import pytest
import torch
import torch.nn.functional as F

import ocltune_torch

from conftest import DEVICE, assert_close, rand

DTYPES = [torch.float16, torch.bfloat16]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_products_run_in_the_autocast_dtype(dtype, strict):
    x, w, b = rand(5, 7), rand(3, 7, seed=1), rand(3, seed=2)
    image, kernel = rand(2, 3, 9, 9, seed=3), rand(4, 3, 3, 3, seed=4)
    results = []
    for device in ["cpu", DEVICE]:
        with torch.autocast(device_type=torch.device(device).type, dtype=dtype):
            results.append((F.linear(x.to(device), w.to(device), b.to(device)), x.to(device) @ w.to(device).t(),
                            F.conv2d(image.to(device), kernel.to(device), padding=1)))
    for ocl, cpu in zip(results[1], results[0]):
        assert ocl.dtype == dtype, ocl.dtype
        assert_close(ocl, cpu, scale=2)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_range_sensitive_ops_run_in_fp32(dtype, strict):
    # CUDA's fp32 list (the CPU's autocast has another): 16-bit inputs are computed and returned in fp32.
    x = rand(4, 6).to(dtype)

    def ops(t):
        return [torch.exp(t), F.softmax(t, dim=1), F.layer_norm(t, (6,)), t.sum(), F.mse_loss(t, t.flip(0))]

    with torch.autocast(device_type="ocl", dtype=dtype):
        outs = ops(x.to(DEVICE))
    for ocl, cpu in zip(outs, ops(x.float())):
        assert ocl.dtype == torch.float32, ocl.dtype
        assert_close(ocl, cpu, scale=2)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_a_training_step_under_autocast(dtype, strict):
    # conv -> batch norm (fp32 weights and statistics on 16-bit data) -> relu -> linear; parameters and
    # their gradients stay fp32.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                                torch.nn.Flatten(), torch.nn.Linear(8 * 6 * 6, 5))
    ocl_model = __import__("copy").deepcopy(model).to(DEVICE)
    x, target = rand(4, 3, 6, 6, seed=5), torch.tensor([0, 3, 1, 4])
    losses, grads = [], []
    for m, device in [(model, "cpu"), (ocl_model, DEVICE)]:
        with torch.autocast(device_type=torch.device(device).type, dtype=dtype):
            loss = F.cross_entropy(m(x.to(device)), target.to(device))
        loss.backward()
        losses.append(loss)
        grads.append([p.grad for p in m.parameters()])
    assert losses[1].dtype == torch.float32
    tol = dict(rtol=5e-2, atol=5e-2) if dtype == torch.bfloat16 else dict(rtol=1e-2, atol=1e-2)
    assert_close(losses[1].detach(), losses[0].detach(), **tol)
    for g_ocl, g_cpu in zip(grads[1], grads[0]):
        assert g_ocl.dtype == torch.float32
        assert_close(g_ocl, g_cpu, **tol)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_a_training_step_of_a_model_converted_to_16_bits(dtype, strict):
    # model.half() / model.bfloat16(): parameters, batch norm statistics and activations all 16-bit,
    # an AdamW step (eps within fp16's range, as 16-bit training sets it); every op on the device. The
    # CPU runs the same 16-bit model as the reference. No bias before the batch norm: its gradient is
    # rounding noise on both sides.
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1, bias=False), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                                torch.nn.MaxPool2d(2), torch.nn.Flatten(), torch.nn.Linear(8 * 3 * 3, 5)).to(dtype)
    ocl_model = __import__("copy").deepcopy(model).to(DEVICE)
    x, target = rand(4, 3, 6, 6, seed=6).to(dtype), torch.tensor([0, 3, 1, 4])
    for m, device in [(model, "cpu"), (ocl_model, DEVICE)]:
        optimizer = torch.optim.AdamW(m.parameters(), lr=1e-2, eps=1e-3)
        F.cross_entropy(m(x.to(device)), target.to(device)).backward()
        optimizer.step()
    tol = dict(rtol=5e-2, atol=5e-2) if dtype == torch.bfloat16 else dict(rtol=1e-2, atol=1e-2)
    for (name, p_ocl), p_cpu in zip(ocl_model.named_parameters(), model.parameters()):
        assert p_ocl.dtype == dtype, name
        assert_close(p_ocl.grad, p_cpu.grad, **tol)
        assert_close(p_ocl.detach(), p_cpu.detach(), **tol)
    for b_ocl, b_cpu in zip(ocl_model.buffers(), model.buffers()):  # running statistics, batches tracked
        assert b_ocl.dtype == b_cpu.dtype
        assert_close(b_ocl, b_cpu, **tol)


def test_gradscaler_unscale_on_the_device(strict):
    # _amp_foreach_non_finite_check_and_unscale_ against the CPU's: gradients of three dtypes (one with
    # an inf, one with a NaN in another call), found_inf set and kept.
    grads = [rand(5, 3), rand(7).half(), rand(2, 2, seed=3).bfloat16(), torch.empty(0)]
    for bad in [None, float("inf"), float("nan")]:
        cpu = [g.clone() for g in grads]
        if bad is not None:
            cpu[1][4] = bad
        ocl = [g.to(DEVICE) for g in cpu]
        found_cpu, found_ocl = torch.zeros(1), torch.zeros(1, device=DEVICE)
        inv_cpu, inv_ocl = torch.full((1,), 0.25), torch.full((1,), 0.25, device=DEVICE)
        torch._amp_foreach_non_finite_check_and_unscale_(cpu, found_cpu, inv_cpu)
        torch._amp_foreach_non_finite_check_and_unscale_(ocl, found_ocl, inv_ocl)
        for a, b in zip(ocl, cpu):
            torch.testing.assert_close(a.cpu(), b, rtol=0, atol=0, equal_nan=True)
        assert found_ocl.item() == found_cpu.item() == (0.0 if bad is None else 1.0)


def test_gradscaler_update_scale_follows_cudas_rule(strict):
    # Backs off after an overflow, grows after growth_interval clean steps, and does not grow to inf.
    for start in [1024.0, 3e38]:
        scale_cpu, scale_ocl = torch.full((1,), start), torch.full((1,), start, device=DEVICE)
        tracker_cpu = torch.zeros(1, dtype=torch.int32)
        tracker_ocl = tracker_cpu.to(DEVICE)
        for found in [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]:
            f = torch.full((1,), found)
            torch._amp_update_scale_(scale_cpu, tracker_cpu, f, 2.0, 0.5, 2)
            torch._amp_update_scale_(scale_ocl, tracker_ocl, f.to(DEVICE), 2.0, 0.5, 2)
            assert scale_ocl.item() == scale_cpu.item() and tracker_ocl.item() == tracker_cpu.item()


def test_gradscaler_steps_keep_gradients_on_the_device():
    # Everything GradScaler does runs on the device, its float64 inverse scale included: nothing crosses
    # to the host.
    ocltune_torch.reset_fallback_stats()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2)).to(DEVICE)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("ocl", init_scale=2.0**10, growth_interval=2)
    for _ in range(3):
        with torch.autocast(device_type="ocl", dtype=torch.float16):
            loss = model(rand(4, 6).to(DEVICE)).float().square().mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
    assert ocltune_torch.fallback_stats() == {}, ocltune_torch.fallback_stats()
    assert scaler.get_scale() == 2.0**11  # two clean steps grew it once
