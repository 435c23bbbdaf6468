"""index_select, embedding (and its backward), gather, scatter, scatter_add, scatter_reduce, index_add, index and
index_put on the plain kernels, against PyTorch's CPU result: dtypes, odd shapes, non-contiguous inputs, negative
dims, bad indices."""

import pytest
import torch
import torch.nn.functional as F

import ocltune_torch
from conftest import DEVICE, assert_close, rand

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16, torch.int8,
          torch.uint8, torch.bool]


def sample(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    v = torch.randint(0, 9, shape, generator=g)
    return (v > 4) if dtype == torch.bool else v.to(dtype)


def same(actual, expected):
    assert actual.device == DEVICE and actual.dtype == expected.dtype and actual.shape == expected.shape
    torch.testing.assert_close(actual.cpu(), expected, rtol=0, atol=0, equal_nan=True)


def idx(*values):
    return torch.tensor(values, dtype=torch.int64)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_index_select(dtype):
    a = sample((5, 7, 3), dtype)
    x = a.to(DEVICE)
    for dim, index in [(0, idx(4, 0, 0, 2)), (1, idx(6, 1)), (-1, idx(2, 2, 0, 1, 0)), (1, idx())]:
        same(x.index_select(dim, index.to(DEVICE)), a.index_select(dim, index))
        same(x.transpose(0, 2).index_select(dim, index.to(DEVICE) % 3), a.transpose(0, 2).index_select(dim, index % 3))
    i32 = idx(1, 3).int()
    same(x.index_select(0, i32.to(DEVICE)), a.index_select(0, i32))
    same(x.index_select(0, idx(4, 3, 2, 1, 0).to(DEVICE)[::2]), a.index_select(0, idx(4, 2, 0)))  # strided index
    same(x[0, 0, 0].index_select(0, idx(0).to(DEVICE)), a[0, 0, 0].index_select(0, idx(0)))  # 0-dim self


def test_index_select_out_of_range_raises():
    x = torch.ones(4, 3, device=DEVICE)
    with pytest.raises(IndexError, match="out of"):
        x.index_select(0, idx(1, 4).to(DEVICE))
    with pytest.raises(IndexError, match="out of"):
        x.index_select(1, idx(-1).to(DEVICE))
    assert x.index_select(0, idx(3).to(DEVICE)).cpu().tolist() == [[1.0, 1.0, 1.0]]  # the device still works


def test_embedding_forward_backward():
    ocltune_torch.reset_fallback_stats()
    torch.manual_seed(0)
    emb = torch.nn.Embedding(11, 5, padding_idx=2)
    ocl = torch.nn.Embedding(11, 5, padding_idx=2)
    ocl.load_state_dict(emb.state_dict())
    ocl.to(DEVICE)
    ids = torch.tensor([[1, 2, 10, 1], [0, 1, 7, 2], [3, 3, 3, 1]])
    y, y_ocl = emb(ids), ocl(ids.to(DEVICE))
    assert_close(y_ocl, y.detach())
    g = rand(3, 4, 5, seed=3)
    y.backward(g)
    y_ocl.backward(g.to(DEVICE))
    assert_close(ocl.weight.grad, emb.weight.grad)
    assert ocltune_torch.fallback_stats() == {}
    # scale_grad_by_freq, fp16 and bf16 weights (accumulated in fp32)
    for dtype in [torch.float32, torch.float16, torch.bfloat16]:
        w = rand(11, 5, dtype=dtype, seed=4)
        wc, wo = w.clone().requires_grad_(), w.to(DEVICE).requires_grad_()
        F.embedding(ids, wc, scale_grad_by_freq=True).backward(g.to(dtype))
        F.embedding(ids.to(DEVICE), wo, scale_grad_by_freq=True).backward(g.to(dtype).to(DEVICE))
        assert_close(wo.grad, wc.grad)
    with pytest.raises(IndexError):
        ocl(torch.tensor([11], device=DEVICE))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_gather(dtype):
    a = sample((4, 6, 5), dtype)
    x = a.to(DEVICE)
    g = torch.Generator().manual_seed(2)
    for dim in [0, 1, -1]:
        size = a.shape[dim]
        index = torch.randint(0, size, (3, 4, 5), generator=g)
        same(x.gather(dim, index.to(DEVICE)), a.gather(dim, index))
        same(x.gather(dim, index.to(DEVICE)[:, ::2]), a.gather(dim, index[:, ::2]))
    t = index.transpose(0, 2)[:4, :2, :3]
    same(x.transpose(0, 2).gather(1, t.to(DEVICE) % 6), a.transpose(0, 2).gather(1, t % 6))
    same(x.gather(1, torch.zeros(4, 0, 5, dtype=torch.int64, device=DEVICE)), a.gather(1, torch.zeros(4, 0, 5, dtype=torch.int64)))
    with pytest.raises(IndexError, match="out of bounds"):
        x.gather(1, torch.full((1, 1, 1), 6, device=DEVICE))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_scatter_and_scatter_add(dtype):
    a = sample((5, 4), dtype)
    src = sample((3, 4), dtype, seed=1)
    x, s = a.to(DEVICE), src.to(DEVICE)
    # a permutation per column, so scatter writes no element twice (which PyTorch leaves unspecified)
    index = torch.stack([torch.randperm(5, generator=torch.Generator().manual_seed(c))[:3] for c in range(4)], 1)
    i = index.to(DEVICE)
    same(x.scatter(0, i, s), a.scatter(0, index, src))
    same(x.scatter(0, i, 1 if dtype != torch.bool else True), a.scatter(0, index, 1 if dtype != torch.bool else True))
    dup = torch.tensor([[0, 1, 1, 0], [4, 1, 1, 0], [4, 4, 1, 3]])  # repeated targets: summed
    same(x.scatter_add(0, dup.to(DEVICE), s), a.scatter_add(0, dup, src))
    same(x.t().scatter_add(-1, dup.t().to(DEVICE), s.t()), a.t().scatter_add(-1, dup.t(), src.t()))
    y = x.clone()
    # distinct columns within each row (index % 4 repeated some, whose order PyTorch leaves unspecified:
    # the H200 wrote the other value)
    rows = torch.tensor([[3, 0], [1, 2], [0, 3]])
    y.scatter_(1, rows.to(DEVICE), s[:, :2])
    same(y, a.clone().scatter_(1, rows, src[:, :2]))
    with pytest.raises(IndexError):
        x.scatter_add(0, torch.tensor([[5]], device=DEVICE), s)


def test_gather_scatter_index_dtypes():
    # As PyTorch's CPU kernels: an int32 index too, and an empty index of any dtype (OpInfo samples, issue 18).
    a = sample((5, 4), torch.float32)
    x = a.to(DEVICE)
    index = torch.tensor([[0, 4, 2, 1], [3, 3, 0, 4]], dtype=torch.int32)
    same(x.gather(0, index.to(DEVICE)), a.gather(0, index))
    src = sample((2, 4), torch.float32, seed=1)
    same(x.scatter(0, index.to(DEVICE), src.to(DEVICE)), a.scatter(0, index, src))
    same(x.scatter_add(0, index.to(DEVICE), src.to(DEVICE)), a.scatter_add(0, index, src))
    empty = torch.tensor([], dtype=torch.uint8)
    same(x[:, 0].gather(0, empty.to(DEVICE)), a[:, 0].gather(0, empty))
    same(x[:, 0].scatter(0, empty.to(DEVICE), 1.0), a[:, 0].scatter(0, empty, 1.0))
    empty2 = torch.zeros(2, 0, dtype=torch.uint8)  # no shape rules either
    same(x[:, 0].gather(0, empty2.to(DEVICE)), a[:, 0].gather(0, empty2))
    same(x[:, 0].scatter(0, empty2.to(DEVICE), 1.0), a[:, 0].scatter(0, empty2, 1.0))
    with pytest.raises(RuntimeError, match="Expected dtype int64 or int32"):
        x.gather(0, torch.zeros(1, 4, dtype=torch.int16, device=DEVICE))


def test_gather_scatter_zero_dim_with_one_dim():
    # PyTorch treats a 0-dim self or index as one dim of size 1, and index's size along dim is free:
    # a 0-dim self takes an index of three elements, a 0-dim index picks from three. Scattering onto a
    # 0-dim self read past the end of its (empty) stride list and crashed the process (issue 41, found
    # with the sanitizers); gather refused both with a reshape error.
    s, v = torch.tensor(5.0), torch.tensor([1.0, 2.0, 3.0])
    x, w = s.to(DEVICE), v.to(DEVICE)
    three, one = idx(0, 0, 0), torch.tensor(2)
    same(x.scatter(0, three.to(DEVICE), 7.0), s.scatter(0, three, 7.0))
    same(x.scatter(0, three.to(DEVICE), torch.full((3,), 7.0, device=DEVICE)), s.scatter(0, three, torch.full((3,), 7.0)))
    same(x.scatter_add(0, three.to(DEVICE), w), s.scatter_add(0, three, v))
    for reduce in ["sum", "amax", "mean"]:
        same(x.scatter_reduce(0, three.to(DEVICE), w, reduce), s.scatter_reduce(0, three, v, reduce))
    same(w.scatter(0, one.to(DEVICE), x), v.scatter(0, one, s))
    same(x.gather(0, three.to(DEVICE)), s.gather(0, three))
    same(w.gather(0, one.to(DEVICE)), v.gather(0, one))
    same(x.gather(0, idx(0).to(DEVICE)), s.gather(0, idx(0)))
    with pytest.raises(IndexError, match="out of bounds"):
        x.gather(0, idx(0, 1).to(DEVICE))
    with pytest.raises(IndexError, match="out of bounds"):
        x.scatter_add(0, idx(0, 1).to(DEVICE), torch.ones(2, device=DEVICE))


def test_scatter_add_float_many_duplicates():
    src = rand(1000, 3)
    index = torch.randint(0, 7, (1000, 3), generator=torch.Generator().manual_seed(0))
    got = torch.zeros(7, 3, device=DEVICE).scatter_add_(0, index.to(DEVICE), src.to(DEVICE))
    assert_close(got, torch.zeros(7, 3).scatter_add_(0, index, src), atol=1e-4)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int8, torch.bool], ids=str)
def test_index_tensor(dtype):
    a = sample((5, 6, 4), dtype)
    x = a.to(DEVICE)
    i, j = idx(0, 4, -1, 2), idx(5, 0, 1, -6)
    cases = [
        lambda t, d: t[i.to(d)],
        lambda t, d: t[:, j.to(d)],
        lambda t, d: t[i.to(d), j.to(d)],  # adjacent: in place of the dims
        lambda t, d: t[i.to(d), :, idx(3, 0, 1, 2).to(d)],  # not adjacent: in front
        lambda t, d: t[idx(1, 2).view(2, 1).to(d), j[:3].to(d)],  # broadcast index tensors
        lambda t, d: t[..., idx(3, 3).to(d)],
        lambda t, d: t[torch.tensor([True, False, True, False, True]).to(d)],  # a mask: through nonzero
        lambda t, d: t.transpose(0, 1)[j.to(d)],
    ]
    for case in cases:
        same(case(x, DEVICE), case(a, "cpu"))
    with pytest.raises(IndexError):
        x[idx(5).to(DEVICE)]
    with pytest.raises(IndexError):
        x[idx(0, 1).to(DEVICE), idx(-7, 0).to(DEVICE)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.uint8], ids=str)
def test_index_fill(dtype, strict):
    a = sample((4, 5, 6), dtype)
    x = a.to(DEVICE)
    for dim, index in ((0, idx(3, 0, 3)), (1, idx(-1, 2)), (2, idx(4)), (-1, torch.tensor(0))):
        same(x.clone().index_fill_(dim, index.to(DEVICE), 7), a.clone().index_fill_(dim, index, 7))
        value = torch.tensor(3, dtype=dtype)  # a 0-dim value tensor, on the CPU or the device
        same(x.clone().index_fill(dim, index.to(DEVICE), value), a.clone().index_fill(dim, index, value))
        same(x.clone().index_fill(dim, index.to(DEVICE), value.to(DEVICE)), a.clone().index_fill(dim, index, value))
    t = x.clone().transpose(0, 2)  # into a transposed view
    same(t.index_fill_(1, idx(1, 3).to(DEVICE), 0), a.clone().transpose(0, 2).index_fill_(1, idx(1, 3), 0))
    same(torch.zeros((), dtype=dtype).to(DEVICE).index_fill_(0, idx(0).to(DEVICE), 2),
         torch.zeros((), dtype=dtype).index_fill_(0, idx(0), 2))
    with pytest.raises(IndexError, match="out of bounds"):
        x.clone().index_fill_(1, idx(5).to(DEVICE), 1)
    with pytest.raises(IndexError, match="int64"):
        x.clone().index_fill_(1, idx(1).int().to(DEVICE), 1)
    with pytest.raises(RuntimeError, match="vector/scalar"):
        x.clone().index_fill_(1, idx(1)[None].to(DEVICE), 1)
    with pytest.raises(RuntimeError, match="0-dimensional value"):
        x.clone().index_fill_(1, idx(1).to(DEVICE), torch.ones(2, dtype=dtype).to(DEVICE))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.int32, torch.uint8], ids=str)
def test_index_put(dtype):
    a = sample((5, 6), dtype)
    v = sample((4,), dtype, seed=1)
    x = a.to(DEVICE)
    i, j = idx(0, 4, -1, 2), idx(5, 0, 1, 3)
    y = x.clone()
    y[i.to(DEVICE), j.to(DEVICE)] = v.to(DEVICE)
    e = a.clone()
    e[i, j] = v
    same(y, e)
    y = x.clone()
    y[:, j.to(DEVICE)] = v.to(DEVICE)  # broadcast values
    e = a.clone()
    e[:, j] = v
    same(y, e)
    dup = idx(1, 1, 3, 1)
    y = x.clone().index_put_((dup.to(DEVICE),), v[:, None].expand(4, 6).to(DEVICE), accumulate=True)
    same(y, a.clone().index_put_((dup,), v[:, None].expand(4, 6), accumulate=True))
    t = x.clone().t()  # into a transposed view
    t.index_put_((j.to(DEVICE), i.to(DEVICE)), v.to(DEVICE), accumulate=True)
    same(t, a.clone().t().index_put_((j, i), v, accumulate=True))
    with pytest.raises(IndexError):
        x.clone()[idx(9).to(DEVICE)] = v[0].to(DEVICE)


# ---- scatter_reduce, scatter's reduce forms, index_add (atomic updates: issue 18) ----

REDUCE_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16, torch.int8,
                 torch.uint8, torch.bool]


def close_or_same(actual, expected, scale=1.0):
    """Exact for integers and bool; float atomics reorder sums and products, so within the dtype's tolerance."""
    if expected.is_floating_point():
        assert_close(actual, expected, scale=scale, equal_nan=True)
    else:
        same(actual, expected)


def reduce_sample(shape, dtype, seed):
    """Small values (products stay small; signed ones negative too, unsigned ones not)."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    low = 0 if dtype == torch.uint8 else -3
    v = torch.randint(low, 4, shape, generator=g)
    return v.to(dtype) if not dtype.is_floating_point else (v + torch.rand(shape, generator=g)).to(dtype)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", REDUCE_DTYPES, ids=str)
def test_scatter_reduce(dtype, reduce, include_self, strict):
    if dtype == torch.bool and reduce == "mean":
        pytest.skip("the CPU refuses a bool mean")
    a = reduce_sample((5, 4, 3), dtype, 0)
    src = reduce_sample((6, 4, 3), dtype, 1)
    x, s = a.to(DEVICE), src.to(DEVICE)
    g = torch.Generator().manual_seed(2)
    index = torch.randint(0, 5, (6, 4, 3), generator=g)  # repeated targets, some rows never hit
    for dim, i in [(0, index), (-1, index[:5] % 3), (1, index[:5].int() % 4)]:  # int32 indices too, as on the CPU
        close_or_same(x.scatter_reduce(dim, i.to(DEVICE), s, reduce, include_self=include_self),
                      a.scatter_reduce(dim, i, src, reduce, include_self=include_self))
    # smaller index than src, non-contiguous self, src and index, in place
    it = index[:4, :3, :2].transpose(0, 1)
    st = src.transpose(0, 1)
    y = x.clone().transpose(0, 1)
    y.scatter_reduce_(1, it.to(DEVICE), s.transpose(0, 1), reduce, include_self=include_self)
    close_or_same(y, a.clone().transpose(0, 1).scatter_reduce_(1, it, st, reduce, include_self=include_self))
    out = torch.empty(0, dtype=dtype, device=DEVICE)
    torch.scatter_reduce(x, 0, index.to(DEVICE), s, reduce, include_self=include_self, out=out)
    close_or_same(out, a.scatter_reduce(0, index, src, reduce, include_self=include_self))


def test_scatter_reduce_nan_and_many_duplicates(strict):
    a = torch.tensor([1.0, float("nan"), 3.0, -2.0])
    src = torch.tensor([float("nan"), 5.0, 0.5, 7.0, -1.0, 2.0])
    index = torch.tensor([0, 0, 1, 2, 2, 3])
    for reduce in ["amax", "amin", "sum", "prod", "mean"]:
        for include_self in [True, False]:
            close_or_same(a.to(DEVICE).scatter_reduce(0, index.to(DEVICE), src.to(DEVICE), reduce,
                                                      include_self=include_self),
                          a.scatter_reduce(0, index, src, reduce, include_self=include_self))
    src = rand(2000, 3)
    index = torch.randint(0, 7, (2000, 3), generator=torch.Generator().manual_seed(0))
    for reduce in ["sum", "mean", "amax", "amin"]:
        close_or_same(torch.zeros(7, 3, device=DEVICE).scatter_reduce(0, index.to(DEVICE), src.to(DEVICE), reduce),
                      torch.zeros(7, 3).scatter_reduce(0, index, src, reduce), scale=10)
    big = torch.randint(-2**40, 2**40, (2000, 3), generator=torch.Generator().manual_seed(1))
    for reduce in ["sum", "amax", "amin", "mean"]:  # int64 beyond int32 and float32
        same(torch.zeros(7, 3, dtype=torch.int64, device=DEVICE).scatter_reduce(0, index.to(DEVICE), big.to(DEVICE),
                                                                               reduce),
             torch.zeros(7, 3, dtype=torch.int64).scatter_reduce(0, index, big, reduce))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int8, torch.bool], ids=str)
def test_scatter_reduce_forms(dtype, strict):
    # scatter(..., reduce="add" | "multiply"), tensor and number, functional, in place and out=.
    a = reduce_sample((5, 4), dtype, 0)
    src = reduce_sample((3, 4), dtype, 1)
    index = torch.tensor([[0, 1, 1, 0], [4, 1, 1, 0], [4, 4, 1, 3]])
    x, s, i = a.to(DEVICE), src.to(DEVICE), index.to(DEVICE)
    value = True if dtype == torch.bool else 2
    for reduce in ["add", "multiply"]:
        close_or_same(x.scatter(0, i, s, reduce=reduce), a.scatter(0, index, src, reduce=reduce))
        close_or_same(x.scatter(0, i, value, reduce=reduce), a.scatter(0, index, value, reduce=reduce))
        y = x.clone().t()
        y.scatter_(0, (index.t() % 4).to(DEVICE), s.t(), reduce=reduce)
        close_or_same(y, a.clone().t().scatter_(0, index.t() % 4, src.t(), reduce=reduce))
        out = torch.empty(5, 4, dtype=dtype, device=DEVICE)
        torch.scatter(x, 0, i, s, reduce=reduce, out=out)
        close_or_same(out, a.scatter(0, index, src, reduce=reduce))


@pytest.mark.parametrize("dtype", REDUCE_DTYPES, ids=str)
def test_index_add(dtype, strict):
    # The CPU rounds 16-bit sums at every step, the device accumulates in float32: twice the tolerance.
    close = lambda a, e: close_or_same(a, e, scale=2)  # noqa: E731
    a = reduce_sample((5, 4, 3), dtype, 0)
    src = reduce_sample((5, 6, 3), dtype, 1)
    x, s = a.to(DEVICE), src.to(DEVICE)
    index = idx(3, 0, 3, 3, 1, 0)  # repeated: accumulated
    close(x.index_add(1, idx(0, 2, 2, 1, 3, 0).to(DEVICE), s), a.index_add(1, idx(0, 2, 2, 1, 3, 0), src))
    close(x.index_add(0, index[:5].to(DEVICE), s[:, :4]), a.index_add(0, index[:5], src[:, :4]))
    close(x.index_add(-1, idx(2, 2, 0).int().to(DEVICE), s[:, :4]), a.index_add(-1, idx(2, 2, 0).int(), src[:, :4]))
    if dtype != torch.bool:
        alpha = 2 if not dtype.is_floating_point else -1.5
        close(x.index_add(0, index[:5].to(DEVICE), s[:, :4], alpha=alpha),
                      a.index_add(0, index[:5], src[:, :4], alpha=alpha))
    y = x.clone().transpose(0, 2)  # in place into a non-contiguous self, from a non-contiguous source
    y.index_add_(1, idx(1, 1, 3, 0, 2, 1).to(DEVICE), s.transpose(0, 2))
    close(y, a.clone().transpose(0, 2).index_add_(1, idx(1, 1, 3, 0, 2, 1), src.transpose(0, 2)))
    out = torch.empty(0, dtype=dtype, device=DEVICE)
    torch.index_add(x, 1, idx(0, 2, 2, 1, 3, 0).to(DEVICE), s, out=out)
    close(out, a.index_add(1, idx(0, 2, 2, 1, 3, 0), src))
    close(x[0, 0, 0].index_add(0, idx(0).to(DEVICE), s[0, 0, 0]), a[0, 0, 0].index_add(0, idx(0), src[0, 0, 0]))
    with pytest.raises(IndexError):
        x.index_add(0, idx(5).to(DEVICE), s[:1, :4])


def test_index_add_float_many_duplicates(strict):
    src = rand(3000, 5)
    index = torch.randint(0, 4, (3000,), generator=torch.Generator().manual_seed(0))
    got = torch.zeros(4, 5, device=DEVICE).index_add_(0, index.to(DEVICE), src.to(DEVICE))
    assert_close(got, torch.zeros(4, 5).index_add_(0, index, src), atol=1e-4)
