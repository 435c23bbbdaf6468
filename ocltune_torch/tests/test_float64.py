"""float64 on a device with cl_khr_fp64 (PoCL has it): casts, the element-wise generator's plain route and
the float64 forms of the family ops, against PyTorch's CPU float64 result, with no CPU fallback. This is
what GradScaler computes its inverse scale in (self._scale.double().reciprocal().float())."""

import pytest
import torch

import ocltune_torch
from conftest import DEVICE


def values(*shape, seed=0, positive=False):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g, dtype=torch.float64) * 3
    return x.abs() + 0.125 if positive else x


# Results the OpenCL full profile rounds correctly for double (+, -, *, /, the casts, the comparisons):
# bit-equal to the CPU. exp and log are within 3 ulp, rsqrt within 2; sqrt should be correctly rounded
# too, but PoCL's is 1 ulp off on some values.
EXACT = {
    "add": lambda a, b: a + b,
    "sub_alpha": lambda a, b: torch.sub(a, b, alpha=0.75),
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "lt": lambda a, b: a < b,
    "eq": lambda a, b: a == b,
}
UNARY_EXACT = {
    "reciprocal": torch.reciprocal,
    "neg": torch.neg,
    "abs": torch.abs,
    "floor": torch.floor,
    "round": torch.round,
    "to_float32": lambda x: x.float(),
    "to_float16": lambda x: x.half(),
    "to_bfloat16": lambda x: x.bfloat16(),
    "to_int64": lambda x: x.long(),
}
UNARY_ULPS = {"sqrt": (torch.sqrt, 1), "exp": (torch.exp, 3), "log": (torch.log, 3), "rsqrt": (torch.rsqrt, 2),
              "sin": (torch.sin, 4)}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_binary_ops_equal_the_cpu(name, strict):
    op = EXACT[name]
    a, b = values(37, 5, seed=1), values(37, 5, seed=2, positive=True)
    # odd shapes, a transposed operand, a broadcast row and a Python number
    for x, y in [(a, b), (a.t().contiguous().t(), b), (a, b[:1]), (a[:, 1:4], b[:, ::2])]:
        assert torch.equal(op(x.to(DEVICE), y.to(DEVICE)).cpu(), op(x, y)), name
    number = torch.tensor(0.3, dtype=torch.float64) if name in ("maximum", "minimum") else 0.3  # a CPU 0-dim
    assert torch.equal(op(a.to(DEVICE), number).cpu(), op(a, number)), name


@pytest.mark.parametrize("name", sorted(UNARY_EXACT))
def test_unary_ops_equal_the_cpu(name, strict):
    op = UNARY_EXACT[name]
    x = values(19, 23, seed=3, positive=name == "reciprocal")
    for v in [x, x.t(), x[::2, 3:]]:
        got = op(v.to(DEVICE))
        assert got.device == DEVICE
        assert torch.equal(got.cpu(), op(v)), name


@pytest.mark.parametrize("name", sorted(UNARY_ULPS))
def test_unary_ops_within_their_ulps(name, strict):
    op, ulps = UNARY_ULPS[name]
    x = values(301, seed=4, positive=name in ("log", "rsqrt", "sqrt"))
    got, want = op(x.to(DEVICE)).cpu(), op(x)
    assert got.dtype == torch.float64
    spacing = torch.nextafter(want.abs(), torch.tensor(float("inf"), dtype=torch.float64)) - want.abs()
    assert ((got - want).abs() <= ulps * spacing).all(), ((got - want).abs() / spacing).max()


def test_special_values(strict):
    x = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-310, -1e300, 2.0**-1074],
                     dtype=torch.float64)
    y = torch.tensor([float("nan"), 1.0, float("inf"), 0.0, 2.0, -0.0, 1e10, 3.0], dtype=torch.float64)
    for op in [torch.reciprocal, torch.neg, torch.abs, lambda t: t.float(), lambda t: t.half()]:
        torch.testing.assert_close(op(x.to(DEVICE)).cpu(), op(x), rtol=0, atol=0, equal_nan=True)
    for op in [torch.div, torch.maximum, torch.minimum, torch.mul]:
        torch.testing.assert_close(op(x.to(DEVICE), y.to(DEVICE)).cpu(), op(x, y), rtol=0, atol=0, equal_nan=True)


def test_promotion_with_float32_and_in_place(strict):
    a64, b32 = values(6, 9, seed=5), values(6, 9, seed=6).float()
    got = a64.to(DEVICE) * b32.to(DEVICE)
    assert got.dtype == torch.float64 and torch.equal(got.cpu(), a64 * b32)
    acc = a64.to(DEVICE)
    acc.add_(b32.to(DEVICE), alpha=2).div_(3.0)
    assert torch.equal(acc.cpu(), a64.add(b32, alpha=2).div(3.0))
    out = torch.zeros(9, 6, device=DEVICE, dtype=torch.float64).t()  # a transposed out=
    torch.reciprocal(a64.to(DEVICE), out=out)
    assert torch.equal(out.cpu(), torch.reciprocal(a64))


def test_gradscaler_inverse_scale_on_the_device(strict):
    """GradScaler.unscale_'s inverse scale, as it computes it: no host round trip."""
    scale = torch.full((1,), 65536.0, device=DEVICE)
    inv = scale.double().reciprocal().float()
    assert inv.device == DEVICE and inv.item() == 2.0**-16
    odd = torch.tensor([3.0], device=DEVICE)
    assert odd.double().reciprocal().float().item() == torch.tensor([3.0]).double().reciprocal().float().item()


def test_ops_without_a_float64_kernel_still_fall_back(monkeypatch):
    """pow has no float64 kernel: the counted fallback, as before."""
    monkeypatch.delenv("OCLTUNE_TORCH_STRICT", raising=False)
    ocltune_torch.reset_fallback_stats()
    x = values(4, 3, seed=7, positive=True)
    with pytest.warns(UserWarning, match="ocltune_torch"):
        got = torch.pow(x.to(DEVICE), x.to(DEVICE))
    assert torch.equal(got.cpu(), torch.pow(x, x))
    assert ocltune_torch.fallback_stats().get("aten::pow.Tensor_Tensor") == 1, ocltune_torch.fallback_stats()
