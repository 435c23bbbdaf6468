"""cumsum and cumprod on the plain scan kernel, against PyTorch's CPU result: every dtype, every dim,
strided views, out=, in place, dtype=, empty and 0-dim tensors, and their gradients."""

import pytest
import torch

from conftest import DEVICE, FLOAT_DTYPES, assert_close, rand

INT_DTYPES = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]
OPS = [torch.cumsum, torch.cumprod]


def sample(shape, dtype, seed=0):
    """Values that keep products finite and exact where the type allows: small integers, floats near 1."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g) > 0
    if dtype.is_floating_point:
        return (1 + 0.1 * torch.randn(shape, generator=g)).to(dtype)
    return torch.randint(0 if dtype == torch.uint8 else -2, 3, shape, generator=g).to(dtype)


def check(actual, expected):
    # Sums of up to a few hundred terms in float (the CPU accumulates float32 in double).
    assert_close(actual, expected, scale=4)


@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES + [torch.bool], ids=str)
def test_every_dim_of_every_dtype(op, dtype, strict):
    a = sample((5, 7, 3), dtype)
    x = a.to(DEVICE)
    for dim in [0, 1, 2, -1]:
        check(op(x, dim), op(a, dim))


@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_strided_views_and_odd_lengths(op, strict):
    a = sample((13, 67), torch.float32)
    x = a.to(DEVICE)
    for view in [lambda t: t.t(), lambda t: t[::2, 3:], lambda t: t[:1].expand(5, 67), lambda t: t.flip(1)[:, 1::3]]:
        for dim in [0, 1]:
            check(op(view(x), dim), op(view(a), dim))
    long_row = sample((1, 1031), torch.float32)  # a prime length, one line
    check(op(long_row.to(DEVICE), 1), op(long_row, 1))


@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_out_in_place_and_dtype(op, strict):
    a = sample((6, 9), torch.int32)
    x = a.to(DEVICE)
    check(op(x, 1, dtype=torch.float32), op(a, 1, dtype=torch.float32))
    check(op(x, 0, dtype=torch.float16), op(a, 0, dtype=torch.float16))
    # out= of another layout (transposed storage) and of a size to be resized.
    out = torch.empty(9, 6, dtype=torch.int64, device=DEVICE).t()
    op(x, 1, out=out)
    check(out, op(a, 1))
    grown = torch.empty(0, dtype=torch.int64, device=DEVICE)
    op(x, 0, out=grown)
    check(grown, op(a, 0))
    # In place on a strided view keeps the dtype.
    f = sample((8, 5), torch.float32)
    y = f.to(DEVICE)
    getattr(y.t(), op.__name__ + "_")(1)
    getattr(f.t(), op.__name__ + "_")(1)
    check(y, f)
    with pytest.raises(RuntimeError, match="dtype"):
        getattr(y, op.__name__ + "_")(0, dtype=torch.float16)


@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_empty_and_scalar(op, strict):
    for shape, dim in [((0, 4), 0), ((3, 0), 1), ((), 0), ((), -1)]:
        a = sample(shape, torch.float32)
        check(op(a.to(DEVICE), dim), op(a, dim))
    with pytest.raises(IndexError):
        op(torch.ones(2, 3, device=DEVICE), 2)


@pytest.mark.parametrize("op", OPS, ids=lambda f: f.__name__)
def test_gradient_matches_cpu(op, strict):
    a = rand(4, 6, seed=3).abs() + 0.5  # cumprod's gradient divides by the inputs
    x = a.clone().to(DEVICE).requires_grad_()
    c = a.clone().requires_grad_()
    g = rand(4, 6, seed=4)
    (op(x, 1) * g.to(DEVICE)).sum().backward()
    (op(c, 1) * g).sum().backward()
    check(x.grad, c.grad)


def test_float64_falls_back_and_says_so():
    import ocltune_torch

    ocltune_torch.reset_fallback_stats()
    a = torch.arange(5, dtype=torch.float64)
    assert torch.equal(torch.cumsum(a.to(DEVICE), 0).cpu(), torch.cumsum(a, 0))
    assert ocltune_torch.fallback_stats().get("aten::cumsum", 0) >= 1, ocltune_torch.fallback_stats()
