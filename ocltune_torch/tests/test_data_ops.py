"""Comparisons, logical and bitwise ops, where, masked_fill, clamp, integer arithmetic, all/any, cat, flip,
roll, arange, nonzero, masked_select, masked_scatter, unfold_backward, tril/triu, repeat and padding on the plain
kernels, against PyTorch's CPU result."""

import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import ocltune_torch
from conftest import DEVICE, TOLERANCES, rand

INT_DTYPES = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]
ALL_DTYPES = [torch.float32, torch.float16, torch.bfloat16] + INT_DTYPES + [torch.bool]


def sample(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    v = torch.randint(-5 if dtype != torch.uint8 else 0, 6, shape, generator=g)
    if dtype == torch.bool:
        return v > 0
    if dtype.is_floating_point:
        return (v.float() * 0.75).to(dtype)
    return v.to(dtype)


def same(actual, expected):
    assert actual.device == DEVICE, actual.device
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    torch.testing.assert_close(actual.cpu(), expected, rtol=0, atol=0, equal_nan=True)


def views(t):
    """The tensor, transposed, sliced and expanded (all of shape 2-D or broadcastable)."""
    return [t, t.t(), t[::2, 1:], t[:1].expand(t.shape[0], t.shape[1])]


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_comparisons(dtype):
    a, b = sample((7, 5), dtype), sample((7, 5), dtype, seed=1)
    x, y = a.to(DEVICE), b.to(DEVICE)
    for op in [torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge]:
        same(op(x, y), op(a, b))
        same(op(x.t(), y[:1].t()), op(a.t(), b[:1].t()))  # transposed, broadcast
        same(op(x, 1), op(a, 1))  # Scalar
        number = torch.tensor(True if dtype == torch.bool else 2)  # a 0-dim CPU tensor
        same(op(x, number), op(a, number))
        same(op(x[:, :0], y[:, :0]), op(a[:, :0], b[:, :0]))


def test_comparisons_promote_and_mirror():
    a, f = sample((4, 6), torch.int64), sample((4, 6), torch.float32, seed=2)
    x, y = a.to(DEVICE), f.to(DEVICE)
    same(x < y, a < f)  # computed in float
    same(x == 1.5, a == 1.5)
    same(2 < x, 2 < a)  # a number first: the mirrored kernel
    same(torch.tensor(0.5) >= y, torch.tensor(0.5) >= f)
    n = torch.tensor([float("nan"), 1.0, float("inf")])
    same(n.to(DEVICE) != n.to(DEVICE), n != n)


def test_logical_and_bitwise():
    for dtype in ALL_DTYPES:
        a, b = sample((6, 5), dtype), sample((6, 5), dtype, seed=4)
        x, y = a.to(DEVICE), b.to(DEVICE)
        for u, v in zip(views(x), views(a)):
            same(torch.logical_not(u), torch.logical_not(v))
        same(torch.logical_and(x, y), torch.logical_and(a, b))
        same(torch.logical_or(x, y.t().t()), torch.logical_or(a, b))
        same(torch.logical_xor(x, y[:1]), torch.logical_xor(a, b[:1]))
        if not dtype.is_floating_point:
            same(x & y, a & b)
            same(x | y[:, :1], a | b[:, :1])
            same(x ^ y, a ^ b)
            same(~x, ~a)
            same(x & 3 if dtype != torch.bool else x & True, a & 3 if dtype != torch.bool else a & True)
    z = torch.ones(3, device=DEVICE)
    z.logical_not_()
    assert z.cpu().tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("op", ["logical_and_", "logical_or_", "logical_xor_"])
def test_logical_in_place_never_resizes_self(op):
    # self [5, 1] with other [5] broadcasts to [5, 5]: the CPU refuses to resize self, ocl resized it
    # (issue 41, found by test_properties_registered.py); a same-shape self still works in place.
    a, b = sample((5, 1), torch.float32), sample((5,), torch.float32, seed=3)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        getattr(a.clone(), op)(b)
    x = a.to(DEVICE)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        getattr(x, op)(b.to(DEVICE))
    assert x.shape == (5, 1)
    expected = getattr(a.expand(5, 5).clone(), op)(b)
    actual = getattr(a.expand(5, 5).clone().to(DEVICE), op)(b.to(DEVICE))
    same(actual, expected)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_where_and_masked_fill(dtype):
    a, b = sample((5, 8), dtype), sample((5, 8), dtype, seed=5)
    m = sample((5, 8), torch.bool, seed=6)
    x, y, mask = a.to(DEVICE), b.to(DEVICE), m.to(DEVICE)
    same(torch.where(mask, x, y), torch.where(m, a, b))
    same(torch.where(mask[:, :1], x.t().t(), y[:1]), torch.where(m[:, :1], a, b[:1]))
    same(x.where(mask, 1), a.where(m, 1))  # a number as other
    same(torch.where(mask, 2, y), torch.where(m, 2, b))
    fill = True if dtype == torch.bool else 3
    same(x.clone().masked_fill_(mask, fill), a.clone().masked_fill_(m, fill))
    same(x.masked_fill(mask[0], fill), a.masked_fill(m[0], fill))  # broadcast mask
    same(x.clone().masked_fill_(mask, torch.tensor(fill)), a.clone().masked_fill_(m, torch.tensor(fill)))
    v = torch.tensor(fill, dtype=dtype)
    same(x.clone().masked_fill_(mask, v.to(DEVICE)), a.clone().masked_fill_(m, v))  # an ocl 0-dim value
    t = x.clone().t()  # in place through a transposed view
    t.masked_fill_(mask.t(), fill)
    same(t, a.clone().t().masked_fill_(m.t(), fill))


def test_where_mixed_dtypes_and_errors():
    a, f = sample((3, 4), torch.int32), sample((3, 4), torch.float16, seed=1)
    m = a > 0
    same(torch.where(m.to(DEVICE), a.to(DEVICE), f.to(DEVICE)), torch.where(m, a, f))
    with pytest.raises(RuntimeError, match="boolean"):
        torch.where(a.to(DEVICE), a.to(DEVICE), a.to(DEVICE))
    with pytest.raises(RuntimeError, match="boolean masks"):
        a.to(DEVICE).masked_fill_(a.to(DEVICE), 1)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool],
                         ids=str)
def test_integer_arithmetic(dtype):
    ocltune_torch.reset_fallback_stats()
    a, b = sample((7, 3), dtype), sample((7, 3), dtype, seed=8)
    x, y = a.to(DEVICE), b.to(DEVICE)
    same(x + y, a + b)
    same(x * y.t().t(), a * b)
    same(x * y[:1], a * b[:1])
    if dtype != torch.bool:
        same(x - y, a - b)
        same(torch.add(x, y, alpha=3), torch.add(a, b, alpha=3))
        same(torch.sub(x.t(), y.t(), alpha=2), torch.sub(a.t(), b.t(), alpha=2))
        same(x + 2, a + 2)
        same(2 - x, 2 - a)
        same(x * 3, a * 3)
        z = x.clone()
        z += y
        z *= 2
        z -= y[0]
        e = a.clone()
        e += b
        e *= 2
        e -= b[0]
        same(z, e)
    assert ocltune_torch.fallback_stats() == {}
    if dtype == torch.bool:
        with pytest.raises(RuntimeError, match="Subtraction"):
            x - y


def test_integer_arithmetic_promotes():
    a, b = sample((4, 4), torch.int32), sample((4, 4), torch.int64, seed=1)
    same(a.to(DEVICE) + b.to(DEVICE), a + b)  # int64
    same(a.to(DEVICE) * True, a * True)
    with pytest.raises(RuntimeError, match="alpha"):
        torch.add(a.to(DEVICE), a.to(DEVICE), alpha=0.5)
    f = a.to(DEVICE) + 0.5  # float result: the family's kernel
    assert f.dtype == torch.float32 and torch.equal(f.cpu(), a + 0.5)


@pytest.mark.parametrize("dtype", ALL_DTYPES[:-1], ids=str)
def test_clamp(dtype):
    a = sample((6, 7), dtype)
    x = a.to(DEVICE)
    lo, hi = (0, 3) if dtype != torch.uint8 else (1, 3)
    same(x.clamp(lo, hi), a.clamp(lo, hi))
    same(x.t().clamp(min=lo), a.t().clamp(min=lo))
    same(x[::2].clamp(max=hi), a[::2].clamp(max=hi))
    same(x.clamp(hi, lo), a.clamp(hi, lo))  # min > max gives max
    same(torch.clamp_min(x, lo), torch.clamp_min(a, lo))
    z = x.clone()
    z.clamp_(lo, hi)
    same(z, a.clamp(lo, hi))
    if not dtype.is_floating_point:
        same(x.clamp(0.5, 2.5), a.clamp(0.5, 2.5))  # promotes to float
    n = torch.tensor([float("nan"), -3.0, 9.0])
    same(n.to(DEVICE).clamp(-1, 1), n.clamp(-1, 1))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_all_any(dtype):
    a = sample((4, 5, 3), dtype)
    a[1] = 1 if dtype != torch.bool else True
    x = a.to(DEVICE)
    for op in [torch.all, torch.any]:
        same(op(x), op(a))
        for dim in [0, 1, -1]:
            same(op(x, dim), op(a, dim))
            same(op(x, dim, keepdim=True), op(a, dim, keepdim=True))
        same(op(x.transpose(0, 2), 1), op(a.transpose(0, 2), 1))
        same(op(x, dim=(0, 2)), op(a, dim=(0, 2)))
        same(op(x[:, :0]), op(a[:, :0]))  # empty: all True, any False
        same(op(x[:, :0], 1), op(a[:, :0], 1))
        same(op(x[0, 0, 0]), op(a[0, 0, 0]))  # 0-dim


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.uint8, torch.bool], ids=str)
def test_cat_and_stack(dtype):
    a, b, c = sample((3, 4), dtype), sample((2, 4), dtype, seed=1), sample((5, 4), dtype, seed=2)
    x, y, z = a.to(DEVICE), b.to(DEVICE), c.to(DEVICE)
    same(torch.cat([x, y, z]), torch.cat([a, b, c]))
    same(torch.cat([x.t(), z.t()], dim=-1), torch.cat([a.t(), c.t()], dim=-1))
    same(torch.cat([x, torch.empty(0, device=DEVICE, dtype=dtype), y]), torch.cat([a, torch.empty(0, dtype=dtype), b]))
    same(torch.cat([x[:0], y]), torch.cat([a[:0], b]))
    same(torch.stack([x, x.flip(0)], dim=1), torch.stack([a, a.flip(0)], dim=1))
    same(torch.cat([x, y.float()]), torch.cat([a, b.float()]))  # promotes
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        torch.cat([x, x.t()])


def test_flip_roll():
    for dtype in [torch.float16, torch.int32, torch.bool]:
        a = sample((3, 4, 5), dtype)
        x = a.to(DEVICE)
        for dims in [(0,), (-1,), (0, 2), (0, 1, 2)]:
            same(x.flip(dims), a.flip(dims))
            same(x.transpose(0, 2).flip(dims), a.transpose(0, 2).flip(dims))
        for shifts, dims in [(1, 0), (-2, -1), ((1, 3), (0, 2)), (7, 1)]:
            same(x.roll(shifts, dims), a.roll(shifts, dims))
            same(x[:, 1:].roll(shifts, dims), a[:, 1:].roll(shifts, dims))
        same(x.roll(4), a.roll(4))  # flattened
        same(x[:0].flip(1), a[:0].flip(1))


def test_arange():
    cases = [(0, 10, 1), (3, 17, 4), (10, 0, -3), (-5, 5, 2), (0, 0, 1)]
    for dtype in [torch.int64, torch.int32, torch.int16, torch.uint8]:
        for start, end, step in cases:
            if dtype == torch.uint8 and start < 0:
                continue
            same(torch.arange(start, end, step, dtype=dtype, device=DEVICE), torch.arange(start, end, step, dtype=dtype))
    for dtype in [torch.float32, torch.float16, torch.bfloat16]:
        for start, end, step in [(0, 1, 0.1), (-2.5, 3.0, 0.25), (5, -5, -0.5), (0, 1000, 1)]:
            got = torch.arange(start, end, step, dtype=dtype, device=DEVICE)
            want = torch.arange(start, end, step, dtype=dtype)
            assert got.shape == want.shape
            torch.testing.assert_close(got.cpu(), want, rtol=1e-6 if dtype == torch.float32 else 1e-2, atol=1e-6)
    assert torch.arange(5, device=DEVICE).dtype == torch.int64
    same(torch.arange(7, device=DEVICE), torch.arange(7))
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        torch.arange(0, 5, 0, device=DEVICE)
    with pytest.raises(RuntimeError, match="inconsistent"):
        torch.arange(0, 5, -1, device=DEVICE)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int8, torch.bool], ids=str)
def test_nonzero_and_masked_select(dtype):
    a = sample((6, 7, 5), dtype)
    x = a.to(DEVICE)
    same(torch.nonzero(x), torch.nonzero(a))
    # column-major, as the CPU, CUDA and the meta function torch.compile traces with lay it out
    assert torch.nonzero(x).stride() == torch.nonzero(a).stride() == (1, torch.nonzero(a).shape[0])
    same(torch.nonzero(x.transpose(0, 2)), torch.nonzero(a.transpose(0, 2)))
    same(torch.nonzero(x[:, :0]), torch.nonzero(a[:, :0]))
    same(torch.nonzero(x[0, 0, 0]), torch.nonzero(a[0, 0, 0]))
    same(torch.nonzero(torch.zeros(9, dtype=dtype, device=DEVICE)), torch.nonzero(torch.zeros(9, dtype=dtype)))
    m = sample((6, 7, 5), torch.bool, seed=3)
    same(torch.masked_select(x, m.to(DEVICE)), torch.masked_select(a, m))
    same(torch.masked_select(x, m[0, :, :1].to(DEVICE)), torch.masked_select(a, m[0, :, :1]))  # broadcast
    same(x[m.to(DEVICE)], a[m])
    big = torch.rand(70000, generator=torch.Generator().manual_seed(1)) > 0.3  # several blocks
    same(torch.nonzero(big.to(DEVICE)), torch.nonzero(big))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_masked_scatter(dtype, strict):
    # source's first elements, in row-major order of the mask's set positions (a broadcast mask, a
    # non-contiguous self and source, a source longer than needed, no set position, a 0-dim self).
    a = sample((6, 7, 5), dtype)
    src = sample((300,), dtype, seed=1)
    m = sample((6, 7, 5), torch.bool, seed=3)
    x, s, md = a.to(DEVICE), src.to(DEVICE), m.to(DEVICE)
    same(x.masked_scatter(md, s), a.masked_scatter(m, src))
    same(x.masked_scatter(md[0, :, :1], s[:200]), a.masked_scatter(m[0, :, :1], src[:200]))  # broadcast
    y = x.clone().transpose(0, 2)
    y.masked_scatter_(md.transpose(0, 2), s[::2].view(30, 5).t())
    same(y, a.clone().transpose(0, 2).masked_scatter_(m.transpose(0, 2), src[::2].view(30, 5).t()))
    same(x.masked_scatter(torch.zeros_like(md), s[:0]), a.masked_scatter(torch.zeros_like(m), src[:0]))
    same(x[0, 0, 0].masked_scatter(md[0, 0, 1], s), a[0, 0, 0].masked_scatter(m[0, 0, 1], src))
    with pytest.raises(RuntimeError, match="Number of elements of source"):
        x.masked_scatter(torch.ones_like(md), s[:3])


def test_masked_scatter_backward(strict):
    a, src = rand(4, 5), rand(30, seed=1)
    m = sample((4, 5), torch.bool, seed=3)
    grads = []
    for d in ["cpu", DEVICE]:
        x, s = a.to(d).detach().requires_grad_(), src.to(d).detach().requires_grad_()
        x.masked_scatter(m.to(d), s).backward(rand(4, 5, seed=2).to(d))
        grads.append((x.grad, s.grad))
    same(grads[1][0], grads[0][0])
    same(grads[1][1], grads[0][1])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("dim,size,step", [(0, 3, 1), (1, 2, 2), (-1, 4, 3), (1, 5, 1), (0, 1, 4), (2, 3, 2)])
def test_unfold_backward(dtype, dim, size, step, strict):
    # Overlapping windows (step < size) add up, gaps (step > size) stay zero.
    a = rand(7, 6, 5, dtype=dtype)
    grads = []
    for d in ["cpu", DEVICE]:
        x = a.to(d).detach().requires_grad_()
        y = x.transpose(0, 1).unfold(dim, size, step)  # a non-contiguous input
        y.backward(torch.randn(y.shape, generator=torch.Generator().manual_seed(4)).to(dtype).to(d))
        grads.append(x.grad)
    if size <= step:  # no element in two windows: copies, exact
        torch.testing.assert_close(grads[1].cpu(), grads[0], rtol=0, atol=0)
    else:
        torch.testing.assert_close(grads[1].cpu(), grads[0], **TOLERANCES[dtype])


def test_unfold_backward_0_dim(strict):
    grads = []
    for d in ["cpu", DEVICE]:
        x = torch.tensor(2.5, device=d, requires_grad=True)
        x.unfold(0, 1, 2).backward(torch.tensor([3.0], device=d))
        grads.append(x.grad)
    same(grads[1], grads[0])
    assert grads[1].device == DEVICE


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8, torch.bool], ids=str)
@pytest.mark.parametrize("diagonal", [-2, 0, 1, 9])
def test_tril_and_triu(dtype, diagonal, strict):
    for shape in [(5, 7), (7, 5), (3, 4, 6), (1, 1), (0, 3)]:
        x = sample(shape, dtype, seed=len(shape) + diagonal)
        for op in (torch.tril, torch.triu):
            assert torch.equal(op(x.to(DEVICE), diagonal).cpu(), op(x, diagonal)), (op, shape)
            t = x.transpose(-2, -1)  # non-contiguous
            assert torch.equal(op(t.to(DEVICE), diagonal).cpu(), op(t, diagonal)), (op, shape)
        y = x.to(DEVICE)
        y.tril_(diagonal)
        assert torch.equal(y.cpu(), x.tril(diagonal))
        y = x.to(DEVICE)
        y.triu_(diagonal)
        assert torch.equal(y.cpu(), x.triu(diagonal))
        out = torch.empty(0, dtype=dtype, device=DEVICE)
        torch.triu(x.to(DEVICE), diagonal, out=out)
        assert torch.equal(out.cpu(), x.triu(diagonal))


def test_tril_backward_and_causal_mask(strict):
    x = rand(6, 6, seed=3).requires_grad_()
    xo = x.detach().to(DEVICE).requires_grad_()
    g = rand(6, 6, seed=4)
    x.tril(-1).backward(g)
    xo.tril(-1).backward(g.to(DEVICE))
    assert torch.equal(xo.grad.cpu(), x.grad)
    # A causal mask as user code builds it, on the device throughout.
    mask = torch.triu(torch.full((4, 4), float("-inf"), device=DEVICE), diagonal=1)
    assert torch.equal(mask.cpu(), torch.triu(torch.full((4, 4), float("-inf")), diagonal=1))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        torch.tril(torch.ones(3, device=DEVICE))


def test_repeat_pad_and_composites():
    a = sample((2, 3), torch.int64)
    x = a.to(DEVICE)
    same(x.repeat(2, 3), a.repeat(2, 3))
    same(x.t().repeat(1, 2, 1), a.t().repeat(1, 2, 1))
    f = rand(2, 3, 4)
    same(F.pad(f.to(DEVICE), (1, 2, 0, 1), value=0.5), F.pad(f, (1, 2, 0, 1), value=0.5))
    same(F.pad(x, (2, 1)), F.pad(a, (2, 1)))
    same(F.pad(f.to(DEVICE), (-1, 1)), F.pad(f, (-1, 1)))  # negative padding crops


STRICT_SCRIPT = """
import torch, torch.nn.functional as F, ocltune_torch
d = "{device}"
x = torch.arange(24, device=d).view(4, 6)
f = torch.randn(4, 6, device=d)
m = x > 7
r = [x == 3, x != f, x < 4, f.ge(0), ~(x > 2), x & 5, x | 1, x ^ 2, torch.logical_and(x, f), torch.logical_or(m, f),
     torch.where(m, x, 0), x.masked_fill(m, -1), f.masked_fill(m, 0.5), x.clamp(2, 9), f.clamp(min=0), m.all(), m.any(1),
     torch.cat([x, x]), torch.stack([x, x]), x.flip(0), x.roll(1, 1), torch.nonzero(m), x[m], f[m], x.repeat(2, 1),
     F.pad(f, (1, 1)), x + 1, x * x, x - x, x.float(), f.long(), m.half(), f.to(torch.bfloat16).int(), x.t().contiguous(),
     torch.arange(0, 1, 0.25, device=d), x[:, 1:3].clone()]
for t in r:
    t.cpu()
print("OK", ocltune_torch.fallback_stats())
"""


def test_strict_mode_no_fallback():
    import os
    env = dict(os.environ, OCLTUNE_TORCH_STRICT="1")
    out = subprocess.run([sys.executable, "-c", STRICT_SCRIPT.format(device=DEVICE)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "OK {}" in out.stdout, out.stdout
