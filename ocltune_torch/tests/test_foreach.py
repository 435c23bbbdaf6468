"""The `_foreach_*` ops that run kernels/plain_foreach.cl once per dense tensor (_foreach_add_.List,
_foreach_add_.Scalar, _foreach_mul_.Scalar: torch.optim's default SGD), in strict mode, against the same
op on CPU copies: every dtype the kernels take, odd sizes, a 0-dim and an empty tensor, and lists that
mix tensors the kernels take with ones that go PyTorch's per-tensor way (transposed, int64, a partner
broadcast to its tensor, an aliased pair). Both computations round once from float, so they agree to a unit in
the last place (the CPU's scalar tail loop may not fuse the multiply-add its vector loop fuses)."""

import pytest
import torch

from conftest import DEVICE, rand

MANTISSA = {torch.float32: 23, torch.float16: 10, torch.bfloat16: 7}
SHAPES = [(7, 13), (1031,), (), (0,), (3, 5, 4), (70001,)]


def assert_ulp(actual, expected, what):
    assert actual.device.type == "ocl" and actual.dtype == expected.dtype and actual.shape == expected.shape, what
    if expected.numel() == 0:
        return
    if not expected.is_floating_point():
        assert torch.equal(actual.cpu(), expected), what
        return
    e, a = expected.float(), actual.cpu().float()
    rtol = 2.0 ** -MANTISSA[expected.dtype]
    torch.testing.assert_close(a, e, rtol=rtol, atol=rtol * e.abs().max().item() + 1e-30, msg=lambda m: f"{what}: {m}")


def pairs(dtype, seed=0):
    cpu = [rand(*s, dtype=dtype, seed=seed + i) for i, s in enumerate(SHAPES)]
    return cpu, [t.to(DEVICE) for t in cpu]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("alpha", [1, -0.05, 0.1])
def test_add_list_follows_cpu(dtype, alpha, strict):
    self_cpu, self_ocl = pairs(dtype)
    other_cpu, other_ocl = pairs(dtype, seed=100)
    torch._foreach_add_(self_cpu, other_cpu, alpha=alpha)
    torch._foreach_add_(self_ocl, other_ocl, alpha=alpha)
    for i, (a, e) in enumerate(zip(self_ocl, self_cpu)):
        assert_ulp(a, e, f"tensor {i}")
    for i, (a, e) in enumerate(zip(other_ocl, other_cpu)):  # the partner is only read
        assert torch.equal(a.cpu(), e), f"other {i} changed"


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("op", ["mul", "add"])
@pytest.mark.parametrize("scalar", [0.9, -3, True])
def test_scalar_ops_follow_cpu(dtype, op, scalar, strict):
    cpu, ocl = pairs(dtype)
    fn = torch._foreach_mul_ if op == "mul" else torch._foreach_add_
    fn(cpu, scalar)
    fn(ocl, scalar)
    for i, (a, e) in enumerate(zip(ocl, cpu)):
        assert_ulp(a, e, f"{op} tensor {i}")


def test_mixed_lists_take_the_per_tensor_way_where_needed(strict):
    """Transposed and int64 tensors, a partner broadcast to its tensor and an aliased pair, beside dense ones."""
    base = rand(9, 6, seed=1)
    self_cpu = [rand(5, 7, seed=2), rand(6, 9, seed=3).t(), torch.arange(10), rand(4, 4, seed=4), base]
    other_cpu = [rand(5, 7, seed=5), rand(9, 6, seed=6), torch.arange(10) * 3, rand(4, seed=7), base]
    self_ocl = [t.to(DEVICE) for t in self_cpu[:4]]
    self_ocl[1] = self_cpu[1].t().contiguous().to(DEVICE).t()  # transposed on the device too
    base_ocl = base.to(DEVICE)
    self_ocl.append(base_ocl)
    other_ocl = [t.to(DEVICE) for t in other_cpu[:4]] + [base_ocl]
    assert not self_ocl[1].is_contiguous()
    torch._foreach_add_(self_cpu, other_cpu, alpha=2)
    torch._foreach_add_(self_ocl, other_ocl, alpha=2)
    for i, (a, e) in enumerate(zip(self_ocl, self_cpu)):
        assert_ulp(a, e, f"tensor {i}")
    torch._foreach_mul_(self_cpu, 3)
    torch._foreach_mul_(self_ocl, 3)
    for i, (a, e) in enumerate(zip(self_ocl, self_cpu)):
        assert_ulp(a, e, f"mul tensor {i}")


def test_views_update_their_base(strict):
    """A dense view with an offset (a row of a matrix) is updated in place, the rest untouched."""
    m_cpu = rand(4, 33, seed=8)
    m_ocl = m_cpu.to(DEVICE)
    torch._foreach_mul_([m_cpu[2]], 0.5)
    torch._foreach_mul_([m_ocl[2]], 0.5)
    assert_ulp(m_ocl, m_cpu, "matrix")


def test_lists_of_unequal_length_raise():
    a = [torch.zeros(3, device=DEVICE)]
    with pytest.raises(RuntimeError, match="same length|must have the same"):
        torch._foreach_add_(a, a + a)


def test_sgd_foreach_follows_cpu(strict):
    """torch.optim.SGD's default (foreach) step with momentum, as the CNN benchmarks run it."""
    params_cpu = [torch.nn.Parameter(rand(*s, seed=10 + i)) for i, s in enumerate([(8, 3), (17,), (2, 3, 5)])]
    params_ocl = [torch.nn.Parameter(p.detach().to(DEVICE)) for p in params_cpu]
    opt_cpu = torch.optim.SGD(params_cpu, lr=0.1, momentum=0.9, weight_decay=0.01, foreach=True)
    opt_ocl = torch.optim.SGD(params_ocl, lr=0.1, momentum=0.9, weight_decay=0.01, foreach=True)
    for step in range(3):
        for i, (pc, po) in enumerate(zip(params_cpu, params_ocl)):
            g = rand(*pc.shape, seed=100 * step + i)
            pc.grad, po.grad = g.clone(), g.to(DEVICE)
        opt_cpu.step()
        opt_ocl.step()
        for i, (pc, po) in enumerate(zip(params_cpu, params_ocl)):
            torch.testing.assert_close(po.detach().cpu(), pc.detach(), rtol=1e-6, atol=1e-6,
                                       msg=lambda m: f"step {step} param {i}: {m}")
