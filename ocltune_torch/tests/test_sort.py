"""sort, argsort and topk on the plain merge-sort kernel, against PyTorch's CPU result: every dtype, every
dim, both orders, ties (stable order), NaN, strided views, out=, odd lengths, k at its limits, gradients."""

import pytest
import torch

import ocltune_torch
from conftest import DEVICE, FLOAT_DTYPES

INT_DTYPES = [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8]


def sample(shape, dtype, seed=0):
    """Few distinct values, so that lines have ties; NaN in the float ones."""
    g = torch.Generator().manual_seed(seed)
    v = torch.randint(0 if dtype in (torch.uint8, torch.bool) else -4, 5, shape, generator=g)
    if dtype == torch.bool:
        return v > 2
    if dtype.is_floating_point:
        t = (v.float() * 0.5).to(dtype)
        if t.numel() > 3:
            t.view(-1)[3] = float("nan")
        return t
    return v.to(dtype)


def same(actual, expected):
    assert actual.device == DEVICE and actual.dtype == expected.dtype and actual.shape == expected.shape
    torch.testing.assert_close(actual.cpu(), expected, rtol=0, atol=0, equal_nan=True)


def consistent(x, dim, values, indices):
    """The indices (ocl) select the values (ocl) from x (CPU), whatever order ties took."""
    assert indices.device == DEVICE and indices.dtype == torch.int64
    torch.testing.assert_close(x.gather(dim, indices.cpu()), values.cpu(), rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES + [torch.bool], ids=str)
def test_stable_sort_every_dim_both_orders(dtype, strict):
    a = sample((6, 9, 5), dtype)
    x = a.to(DEVICE)
    for dim in [0, 1, 2, -1]:
        for descending in [False, True]:
            v, i = torch.sort(x, dim=dim, descending=descending, stable=True)
            cv, ci = torch.sort(a, dim=dim, descending=descending, stable=True)
            same(v, cv)
            same(i, ci)  # ties keep their order: the indices are the CPU's exactly


def test_default_sort_argsort_and_views(strict):
    a = sample((13, 67), torch.float32)
    x = a.to(DEVICE)
    for view in [lambda t: t, lambda t: t.t(), lambda t: t[::2, 3:], lambda t: t[:1].expand(4, 67)]:
        for dim in [0, 1]:
            v, i = torch.sort(view(x), dim)
            same(v, torch.sort(view(a), dim).values)
            consistent(view(a), dim, v, i)
            same(torch.argsort(view(x), dim=dim, stable=True), torch.argsort(view(a), dim=dim, stable=True))
    for n in [1, 2, 1000, 1031]:  # one element, a pair, a classifier row, a prime
        row = torch.randn(3, n, generator=torch.Generator().manual_seed(n))
        same(torch.sort(row.to(DEVICE), 1, descending=True).values, torch.sort(row, 1, descending=True).values)


def test_sort_out_empty_and_scalar(strict):
    a = sample((5, 8), torch.int32)
    x = a.to(DEVICE)
    values = torch.empty(8, 5, dtype=torch.int32, device=DEVICE).t()  # another layout
    indices = torch.empty(0, dtype=torch.int64, device=DEVICE)  # resized
    torch.sort(x, dim=1, stable=True, out=(values, indices))
    cv, ci = torch.sort(a, dim=1, stable=True)
    same(values, cv)
    same(indices, ci)
    for shape in [(0, 4), (3, 0), ()]:
        e = sample(shape, torch.float32)
        v, i = torch.sort(e.to(DEVICE), 0 if shape else -1)
        cv, ci = torch.sort(e, 0 if shape else -1)
        same(v, cv)
        same(i, ci)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.int64, torch.uint8], ids=str)
def test_topk_largest_smallest_and_unsorted(dtype, strict):
    a = sample((7, 50), dtype)
    x = a.to(DEVICE)
    for dim, k in [(1, 5), (0, 3), (1, 1), (1, 50), (0, 0)]:
        for largest in [True, False]:
            v, i = torch.topk(x, k, dim=dim, largest=largest)
            cv, _ = torch.topk(a, k, dim=dim, largest=largest)
            same(v, cv)
            consistent(a, dim, v, i)
            # sorted=False: any order of the same elements.
            u, j = torch.topk(x, k, dim=dim, largest=largest, sorted=False)
            same(torch.sort(u, dim).values, torch.sort(cv, dim).values)
            consistent(a, dim, u, j)
    # out=, and a classifier's top-5 over 1000 classes
    logits = torch.randn(16, 1000, generator=torch.Generator().manual_seed(2))
    values = torch.empty(0, device=DEVICE)
    indices = torch.empty(0, dtype=torch.int64, device=DEVICE)
    torch.topk(logits.to(DEVICE), 5, 1, out=(values, indices))
    cv, ci = torch.topk(logits, 5, 1)
    same(values, cv)
    same(indices, ci)  # distinct random values: the same indices


def test_topk_rejects_k_out_of_range():
    x = torch.ones(3, 4, device=DEVICE)
    with pytest.raises(RuntimeError, match="out of range"):
        torch.topk(x, 5, 1)
    with pytest.raises(RuntimeError, match="out of range"):
        torch.topk(x, -1, 1)


@pytest.mark.parametrize("op", ["sort", "topk"])
def test_gradient_matches_cpu(op, strict):
    a = torch.randn(4, 9, generator=torch.Generator().manual_seed(5))
    g = torch.randn(4, 9 if op == "sort" else 3, generator=torch.Generator().manual_seed(6))
    x = a.clone().to(DEVICE).requires_grad_()
    c = a.clone().requires_grad_()
    run = (lambda t: torch.sort(t, 1).values) if op == "sort" else (lambda t: torch.topk(t, 3, 1).values)
    (run(x) * g.to(DEVICE)).sum().backward()
    (run(c) * g).sum().backward()
    same(x.grad, c.grad)


def test_float64_falls_back():
    ocltune_torch.reset_fallback_stats()
    a = torch.tensor([3.0, 1.0, 2.0], dtype=torch.float64)
    same(torch.sort(a.to(DEVICE)).values, torch.sort(a).values)
    assert any("sort" in name for name in ocltune_torch.fallback_stats()), ocltune_torch.fallback_stats()
