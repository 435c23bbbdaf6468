"""Whole networks on ocl in strict mode (no CPU fallback): outputs, losses, every gradient and three optimiser
steps against the same network on the CPU. Random weights; nothing is downloaded."""

import copy
import os

import pytest
import torch
import torch.nn.functional as F

import ocltune_torch
from conftest import DEVICE

torchvision = pytest.importorskip("torchvision")


@pytest.fixture(autouse=True)
def strict(monkeypatch):
    monkeypatch.setenv("OCLTUNE_TORCH_STRICT", "1")
    ocltune_torch.reset_fallback_stats()
    yield
    assert ocltune_torch.fallback_stats() == {}


def close(actual, expected, what, rtol, atol):
    torch.testing.assert_close(actual.detach().cpu(), expected.detach(), rtol=rtol, atol=atol, msg=lambda m: f"{what}: {m}")


def compare_gradients(cpu_model, ocl_model, exact_model, what):
    """Every gradient of ocl is as close to the float64 gradient as the CPU's float32 one is.

    At random initialisation with a small batch these networks are ill-conditioned (batch norm over a
    few values; biases before batch norm whose true gradient is 0): CPU float32 itself is up to 10%
    off float64 on some resnet50 gradients, and the conv2d family's Winograd and implicit-GEMM
    algorithms round differently from the CPU's direct loops. So each parameter's ocl error against
    float64 may be 16x the CPU's, plus 1e-3 of the largest gradient of the network."""
    exact = [p.grad for p in exact_model.parameters()]
    largest = max(g.abs().max().item() for g in exact)
    for (name, p_cpu), p_ocl, g64 in zip(cpu_model.named_parameters(), ocl_model.parameters(), exact):
        assert p_ocl.grad is not None, name
        cpu_error = (p_cpu.grad.double() - g64).abs().max().item()
        ocl_error = (p_ocl.grad.cpu().double() - g64).abs().max().item()
        assert ocl_error <= 16 * cpu_error + 1e-3 * largest, (
            f"{what}: grad {name}: ocl is {ocl_error:.3g} from float64, the CPU {cpu_error:.3g} (largest {largest:.3g})"
        )


def as_exact_as_cpu(ocl, cpu, exact, what, slack):
    """ocl is as close to the float64 result as the CPU's float32 one is (4x, plus `slack` of its size)."""
    ocl_error = (ocl.detach().cpu().double() - exact.detach()).abs().max().item()
    cpu_error = (cpu.detach().double() - exact.detach()).abs().max().item()
    size = exact.detach().abs().max().item()
    assert ocl_error <= 4 * cpu_error + slack * size, (
        f"{what}: ocl is {ocl_error:.3g} from float64, the CPU {cpu_error:.3g} (size {size:.3g})"
    )


def train_and_compare(make_model, make_input, loss_fn, make_optimizer, rtol=1e-3, atol=1e-4, steps=3):
    """The ocl network against the same network on the CPU in float32 and in float64 (the exact
    reference: after a few steps these small-batch networks amplify rounding, so the CPU's float32
    trajectory is itself only as good as its distance from float64)."""
    torch.manual_seed(0)
    cpu_model = make_model()
    # Dropout draws different masks on the two devices (test_dropout_trains_on_the_device covers it).
    for m in cpu_model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    ocl_model = copy.deepcopy(cpu_model).to(DEVICE)
    exact_model = copy.deepcopy(cpu_model).double()
    x, target = make_input()
    x_ocl, target_ocl = x.to(DEVICE), target.to(DEVICE)
    x64, target64 = x.double(), target.double() if target.is_floating_point() else target
    opts = [make_optimizer(m) for m in (cpu_model, ocl_model, exact_model)]
    for step in range(steps):
        for opt in opts:
            opt.zero_grad()
        out_cpu, out_ocl, out64 = cpu_model(x), ocl_model(x_ocl), exact_model(x64)
        loss_cpu, loss_ocl, loss64 = loss_fn(out_cpu, target), loss_fn(out_ocl, target_ocl), loss_fn(out64, target64)
        if step == 0:
            close(out_ocl, out_cpu, "output", rtol, atol)
            close(loss_ocl, loss_cpu, "loss", rtol, atol)
        else:
            # The steps follow the exact losses. Randomly initialised small-batch networks are chaotic
            # under rounding (mobilenet_v2's CPU float32 loss is 0.3% off float64 after two steps), so
            # the bound is 2% of the loss: a missing or wrong update moves it by 5-10% per step.
            as_exact_as_cpu(loss_ocl, loss_cpu, loss64, f"loss at step {step}", 0.02)
        for loss in (loss_cpu, loss_ocl, loss64):
            loss.backward()
        if step == 0:
            compare_gradients(cpu_model, ocl_model, exact_model, "step 0")
        for opt in opts:
            opt.step()
    for m in (cpu_model, ocl_model, exact_model):
        m.eval()
    with torch.no_grad():
        as_exact_as_cpu(ocl_model(x_ocl), cpu_model(x), exact_model(x64), "eval output after the steps", 20 * rtol)


def image_batch(n=2, size=32, classes=10):
    g = torch.Generator().manual_seed(1)
    return torch.randn(n, 3, size, size, generator=g), torch.randint(0, classes, (n,), generator=g)


def sgd(model):
    return torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9, weight_decay=1e-4)


# Batch norm in training normalises each channel over N x H x W values: at the last stage of these
# networks that is N x 2 x 2, and over very few values it magnifies rounding differences without
# bound (two values normalise to +-1 whatever their difference), so the batch is 4 and the image 64.
# Known gap: in resnet50 the training losses drift from float64 40x further than the CPU's (11% after
# two steps, against 0.3%); the first layers' weight gradients are the suspects: conv2d's
# backward-weight kernels accumulate N x P x Q products in long fp32 sums (a depthwise layer of
# mobilenet_v2 at batch 8 is 1e-3 of the largest gradient off float64, the CPU 1e-5). Strict: the
# test reports when this is fixed.
KNOWN_GRADIENT_GAP = pytest.mark.xfail(
    reason="conv2d backward-weight accumulates long fp32 sums: first-layer gradients 1e-3 off", strict=True
)


@pytest.mark.parametrize(
    "arch", ["resnet18", "mobilenet_v2", pytest.param("resnet50", marks=KNOWN_GRADIENT_GAP)]
)
def test_cnn_trains_like_cpu(arch):
    train_and_compare(
        lambda: getattr(torchvision.models, arch)(num_classes=10),
        lambda: image_batch(4, 64),
        F.cross_entropy,
        sgd,
    )


def encoder():
    layer = torch.nn.TransformerEncoderLayer(
        d_model=768, nhead=12, dim_feedforward=3072, dropout=0.0, activation="gelu", batch_first=True
    )
    return torch.nn.Sequential(torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False))


def test_transformer_encoder_trains_like_cpu():
    def make_input():
        g = torch.Generator().manual_seed(2)
        return torch.randn(2, 9, 768, generator=g), torch.randn(2, 9, 768, generator=g)

    train_and_compare(
        encoder,
        make_input,
        F.mse_loss,
        lambda m: torch.optim.AdamW(m.parameters(), lr=1e-4, weight_decay=0.01),
        rtol=2e-3,
        atol=2e-4,
    )


def test_dropout_trains_on_the_device():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.1, batch_first=True)
    model = layer.to(DEVICE)
    x = torch.randn(2, 5, 64, device=DEVICE)
    loss = model(x).square().mean()
    loss.backward()
    assert torch.isfinite(loss).item()
    assert all(p.grad is not None and torch.isfinite(p.grad).all().item() for p in model.parameters())
