"""The compute ops of the backend against PyTorch's CPU result on the same inputs, and their checks."""

import warnings

import pytest
import torch
import torch.nn.functional as F

import ocltune_torch
from conftest import DEVICE, FLOAT_DTYPES, assert_close, rand

# (m, k, n): odd sizes, 1, primes, and sizes that are no multiple of any tile.
GEMM_SHAPES = [(1, 1, 1), (7, 13, 5), (33, 17, 65), (64, 64, 64), (1, 97, 3), (130, 3, 1)]


def on(t):
    return t.to(DEVICE)


def gemm_tol(k, dtype):
    return dict(rtol=1e-4 if dtype == torch.float32 else 2e-2, atol=1e-4 * k if dtype == torch.float32 else 5e-2)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("m,k,n", GEMM_SHAPES)
def test_mm(m, k, n, dtype):
    a, b = rand(m, k, dtype=dtype), rand(k, n, dtype=dtype, seed=1)
    expected = (a.float() @ b.float()).to(dtype)
    assert_close(torch.mm(on(a), on(b)), expected, **gemm_tol(k, dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_mm_layouts(dtype):
    a, b = rand(19, 23, dtype=dtype), rand(23, 11, dtype=dtype, seed=1)
    big_a, big_b = rand(30, 40, dtype=dtype, seed=2), rand(40, 30, dtype=dtype, seed=3)
    cases = [
        (a.t().contiguous().t(), b),  # transposed A: trans_a
        (a, b.t().contiguous().t()),  # transposed B: trans_b
        (a.t().contiguous().t(), b.t().contiguous().t()),
        (big_a[3:22, 5:28], big_b[2:25, 7:18]),  # slices: leading dimension and offset
        (big_a[3:22, 5:28].t().contiguous().t(), big_b[2:25, 7:18]),
        (big_a[::2, ::2][:19, :17], big_b[::2][:17, :11]),  # strides no layout has: a packed copy
        (a[:, :1].expand(19, 23), b),  # expanded: a packed copy
    ]
    for x, y in cases:
        expected = (x.float() @ y.float()).to(dtype)
        dx = on_view(x)  # the same view on the device
        dy = on_view(y)
        assert dx.stride() == x.stride() and dy.stride() == y.stride()
        assert_close(dx @ dy, expected, **gemm_tol(x.shape[1], dtype))


def on_view(t):
    """The same view (sizes, strides, offset) of a device copy of t's storage."""
    base = torch.empty(0, dtype=t.dtype)
    base.set_(t.untyped_storage())
    d = on(base)
    return d.as_strided(t.shape, t.stride(), t.storage_offset())


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_addmm_and_linear(dtype):
    x, w, bias = rand(9, 31, dtype=dtype), rand(14, 31, dtype=dtype, seed=1), rand(14, dtype=dtype, seed=2)
    expected = (bias.float() + x.float() @ w.float().t()).to(dtype)
    assert_close(F.linear(on(x), on(w), on(bias)), expected, **gemm_tol(31, dtype))
    c = rand(9, 14, dtype=dtype, seed=3)
    expected = (0.5 * c.float() + 2.0 * (x.float() @ w.float().t())).to(dtype)
    assert_close(torch.addmm(on(c), on(x), on(w).t(), beta=0.5, alpha=2.0), expected, **gemm_tol(31, dtype))
    nan = torch.full((9, 14), float("nan"), dtype=dtype)
    assert_close(torch.addmm(on(nan), on(x), on(w).t(), beta=0), (x.float() @ w.float().t()).to(dtype),
                 **gemm_tol(31, dtype))  # beta 0 ignores self, NaN included


def elementwise_calls():
    """Elementwise-family calls on the test device since the last reset of the dispatch statistics."""
    device = ocltune_torch.dispatch_stats()["devices"].get(DEVICE.index, {})
    return sum(device.get("families", {}).get("elementwise", {}).values())


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_linear_adds_its_bias_in_the_gemm(strict, dtype):
    """nn.Linear's bias row is the GEMM's epilogue: one kernel, no elementwise pass, on 2-D and 3-D
    inputs, a bias that is a view (offset) or a [1, n] row, a transposed weight, and odd sizes; a self
    that is no bias row (strided, or varying along m) takes the general path."""
    x, w = rand(2, 9, 31, dtype=dtype), rand(14, 31, dtype=dtype, seed=1)
    big_bias = rand(20, dtype=dtype, seed=2)
    for bias in (big_bias[:14], big_bias[5:19], big_bias[None, 3:17]):
        expected = (bias.float() + x.float() @ w.float().t()).to(dtype)
        ocltune_torch.reset_dispatch_stats()
        got = F.linear(on(x), on(w), on_view(bias))
        assert elementwise_calls() == 0
        assert_close(got, expected, **gemm_tol(31, dtype))
        wt = on(w.t().contiguous()).t()  # the weight stored transposed: trans_b flips
        assert_close(F.linear(on(x[0]), wt, on_view(bias)), expected[0], **gemm_tol(31, dtype))
    for m, k, n in GEMM_SHAPES:
        a, b, bias = rand(m, k, dtype=dtype), rand(k, n, dtype=dtype, seed=1), rand(n, dtype=dtype, seed=2)
        expected = (bias.float() + 1.5 * (a.float() @ b.float())).to(dtype)
        assert_close(torch.addmm(on(bias), on(a), on(b), alpha=1.5), expected, **gemm_tol(k, dtype))
    a, b = rand(9, 31, dtype=dtype), rand(31, 14, dtype=dtype, seed=1)
    strided = rand(28, dtype=dtype, seed=3)[::2]  # elements two apart: not a bias row
    column = rand(9, 1, dtype=dtype, seed=4)  # varies along m
    for self in (strided, column):
        expected = (self.float() + a.float() @ b.float()).to(dtype)
        assert_close(torch.addmm(on_view(self), on(a), on(b)), expected, **gemm_tol(31, dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_bmm_and_matmul(dtype):
    a, b = rand(3, 7, 12, dtype=dtype), rand(3, 12, 5, dtype=dtype, seed=1)
    expected = (a.float() @ b.float()).to(dtype)
    assert_close(torch.bmm(on(a), on(b)), expected, **gemm_tol(12, dtype))
    assert_close(torch.bmm(on(a), on(b.transpose(1, 2).contiguous()).transpose(1, 2)), expected, **gemm_tol(12, dtype))
    assert_close(torch.matmul(on(a), on(b[0])), (a.float() @ b[0].float()).to(dtype), **gemm_tol(12, dtype))
    q = rand(2, 3, 6, 8, dtype=dtype, seed=4)
    expected = (q.float() @ q.float().transpose(-1, -2)).to(dtype)
    assert_close(on(q) @ on(q).transpose(-1, -2), expected, **gemm_tol(8, dtype))  # attention-like


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_bmm_of_a_shape_after_a_broadcast_batch(dtype):
    # A 16-bit GEMM widens its operands into fp32 copies: one A for every batch entry where A's batch
    # stride is 0, each entry's otherwise. The runtime resolves a shape once; it used to run every later
    # call with the first call's work sizes, so a real batch after a broadcast one left nine of ten A
    # entries unwidened (NaN or stale values, no error). Found by test_properties_registered.py.
    a, b = rand(10, 5, 10, dtype=dtype, seed=6), rand(10, 10, 5, dtype=dtype, seed=7)
    broadcast = on(a[:1]).expand(10, 5, 10)  # batch stride 0 on the device
    assert broadcast.stride(0) == 0
    for x in (broadcast, on(a), broadcast, on(a.transpose(1, 2).contiguous()).transpose(1, 2)):
        assert_close(torch.bmm(x, on(b)), (x.cpu().float() @ b.float()).to(dtype), **gemm_tol(10, dtype))


def test_matmul_follows_the_float32_matmul_precision():
    # ocl's fp32 products take TF32 permission from the switch cuda's cuBLAS products read, in both of
    # its spellings; off by default. Convolutions follow cuDNN's switch instead (test_nn_ops.py).
    allowed = torch.ops.ocltune.matmul_tf32_allowed
    matmul = torch.backends.cuda.matmul
    saved = torch.get_float32_matmul_precision()
    a, b = rand(65, 300), rand(300, 33, seed=1)
    try:
        torch.set_float32_matmul_precision("highest")
        assert not allowed()
        for precision in ("high", "medium"):
            torch.set_float32_matmul_precision(precision)
            assert allowed(), precision
        matmul.allow_tf32 = False
        assert not allowed()
        matmul.allow_tf32 = True
        assert allowed()
        # (Setting fp32_precision against what set_float32_matmul_precision set makes PyTorch's own
        # getter, allow_tf32, raise; ocl reads the switch through the same getter.)
        assert not torch.ops.ocltune.conv_tf32_allowed(), "the matmul switch does not govern convolutions"
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # read as cuda reads it: no deprecated getter
            y = on(a) @ on(b)
        # TF32 keeps 10 mantissa bits of each input where the device has TF32 units; exact elsewhere.
        assert_close(y, a @ b, rtol=1e-2, atol=1e-2)
        torch.set_float32_matmul_precision("highest")
        assert_close(on(a) @ on(b), a @ b, **gemm_tol(300, torch.float32))
    finally:
        torch.set_float32_matmul_precision(saved)


def test_gemm_edge_sizes():
    a, b = rand(4, 0), rand(0, 3)
    assert torch.equal(torch.mm(on(a), on(b)).cpu(), torch.zeros(4, 3))
    assert torch.mm(on(rand(0, 5)), on(rand(5, 3))).shape == (0, 3)
    bias = rand(3)
    assert_close(torch.addmm(on(bias), on(a), on(b), beta=2.0), (2 * bias).expand(4, 3).contiguous())


def test_gemm_checks():
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.mm(on(rand(3, 4)), on(rand(5, 2)))
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.mm(on(rand(3, 4)), on(rand(4, 2, dtype=torch.float16)))
    with pytest.raises(RuntimeError, match="same device|devices"):
        torch.mm(on(rand(3, 4)), rand(4, 2))
    with pytest.raises(RuntimeError):
        torch.bmm(on(rand(2, 3, 4)), on(rand(3, 4, 2)))
    # float64 has no ocl GEMM: the CPU fallback computes it, counted
    ocltune_torch.reset_fallback_stats()
    a, b = rand(5, 6, dtype=torch.float64), rand(6, 2, dtype=torch.float64)
    assert_close(torch.mm(on(a), on(b)), a @ b)
    assert ocltune_torch.fallback_stats() == {"aten::mm": 1}


BROADCASTS = [((5, 7), (5, 7)), ((5, 7), (7,)), ((5, 1), (1, 7)), ((2, 1, 3, 4), (5, 1, 1)), ((1,), (3, 4)),
              ((3, 4), ()), ((2, 3, 1, 5, 2), (3, 4, 1, 2))]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shapes", BROADCASTS)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary(op, shapes, dtype):
    a, b = rand(*shapes[0], dtype=dtype), rand(*shapes[1], dtype=dtype, seed=1)
    if op == "div":
        b = b.abs() + 0.5
    f = getattr(torch, op)
    assert_close(f(on(a), on(b)), f(a, b))
    if op in ("add", "sub"):
        assert_close(f(on(a), on(b), alpha=-2.5), f(a, b, alpha=-2.5), scale=2)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_binary_scalars_and_layouts(dtype):
    a = rand(6, 5, dtype=dtype)
    b = rand(6, 5, dtype=dtype, seed=1)
    x = on(a)
    assert_close(x + 2, a + 2)
    assert_close(x - 0.5, a - 0.5)
    assert_close(3 - x, 3 - a)  # reversed
    assert_close(x * 1.5, a * 1.5)
    assert_close(2 / (x.abs() + 1), 2 / (a.abs() + 1))
    assert_close(torch.add(x, 2, alpha=3), torch.add(a, 2, alpha=3))
    assert_close(x * torch.tensor(2.0), a * 2)  # a 0-dim CPU tensor
    assert_close(x * on(torch.tensor(2.0)), a * 2)  # a 0-dim ocl tensor (float32: a number for 16-bit x)
    t = x.t()
    r = t * 2  # a dense transposed input keeps its layout
    assert r.stride() == t.stride()
    assert_close(r, a.t() * 2)
    assert_close(x.t() + on(b).t(), a.t() + b.t())
    assert_close(x[:, 1:4] + on(b)[:, :3], a[:, 1:4] + b[:, :3])  # slices: strided operands
    assert_close(x.t()[1:] * x.t()[:-1], a.t()[1:] * a.t()[:-1])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_in_place(dtype):
    a, b = rand(4, 6, dtype=dtype), rand(6, dtype=dtype, seed=1)
    x = on(a)
    ptr = x.data_ptr()
    x.add_(on(b), alpha=2).mul_(on(b)).sub_(1.5).div_(on(b).abs() + 1)
    expected = a.clone().add_(b, alpha=2).mul_(b).sub_(1.5).div_(b.abs() + 1)
    assert x.data_ptr() == ptr
    assert_close(x, expected, scale=3)
    y = on(a)
    y[:, ::2].add_(1.0)  # not dense: computed aside and copied in
    e = a.clone()
    e[:, ::2].add_(1.0)
    assert_close(y, e)
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        on(b).add_(on(a))


@pytest.mark.parametrize("a_dtype,b_dtype", [(torch.float16, torch.float32), (torch.float32, torch.bfloat16),
                                             (torch.float16, torch.bool), (torch.int64, torch.float32),
                                             (torch.bfloat16, torch.int32), (torch.float16, torch.bfloat16)])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_mixed_dtypes_compute_in_the_result_type(a_dtype, b_dtype, op, strict):
    """As TensorIterator: the inputs cast to their common type on the device, then the op; in place, the
    result cast into self where PyTorch allows it, and the error PyTorch gives where it does not."""
    def make(dtype, seed):
        if dtype == torch.bool:
            return torch.rand(5, 7, generator=torch.Generator().manual_seed(seed)) > 0.5
        if not dtype.is_floating_point:
            return torch.randint(1, 9, (5, 7), generator=torch.Generator().manual_seed(seed), dtype=dtype)
        return rand(5, 7, seed=seed).to(dtype) + 2  # away from 0 for div
    if op == "sub" and torch.bool in (a_dtype, b_dtype):
        pytest.skip("PyTorch has no bool subtraction")
    a, b = make(a_dtype, 1), make(b_dtype, 2)
    fn = getattr(torch, op)
    expected = fn(a, b)
    got = fn(on(a), on(b).t().contiguous().t())  # a strided partner too
    assert got.dtype == expected.dtype
    assert_close(got, expected)
    self = on(a)
    if torch.can_cast(expected.dtype, a_dtype):
        getattr(self, op + "_")(on(b))
        assert_close(self, getattr(a.clone(), op + "_")(b))
    else:
        with pytest.raises(RuntimeError, match="can't be cast"):
            getattr(self, op + "_")(on(b))


def test_binary_fallbacks_and_errors():
    ocltune_torch.reset_fallback_stats()
    i = torch.arange(6).reshape(2, 3)
    assert torch.equal((on(i) + 1).cpu(), i + 1)  # int64: the plain kernels (through ops/elementwise.h), no fallback
    assert torch.equal((on(i) * on(i)).cpu(), i * i)
    f = rand(3)
    assert_close(on(f) * float("inf"), f * float("inf"))  # the C ABI takes finite scalars only
    stats = ocltune_torch.fallback_stats()
    assert stats == {"aten::mul.Tensor": 1}, stats
    with pytest.raises(RuntimeError, match="same device|devices"):
        on(f) + f
    with pytest.raises(RuntimeError, match="must match the size|size of tensor"):
        on(rand(3, 4)) + on(rand(5))


UNARY = [
    ("relu", torch.relu), ("sigmoid", torch.sigmoid), ("tanh", torch.tanh), ("silu", F.silu),
    ("gelu", F.gelu), ("gelu_tanh", lambda t: F.gelu(t, approximate="tanh")),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name,f", UNARY)
def test_unary(name, f, dtype):
    a = rand(7, 13, dtype=dtype) * 3
    assert_close(f(on(a)), f(a), scale=2)
    assert_close(f(on(a).t()), f(a.t()), scale=2)  # dense, transposed
    assert_close(f(on(a)[1:5, ::3]), f(a[1:5, ::3]), scale=2)  # strided
    assert_close(f(on(a)[:1].expand(4, 13)), f(a[:1].expand(4, 13)), scale=2)  # expanded


def test_unary_in_place_and_checks():
    a = rand(5, 6) * 3
    for name in ("relu_", "sigmoid_", "tanh_"):
        x = on(a)
        getattr(x, name)()
        assert_close(x, getattr(a.clone(), name)())
    x = on(a)
    F.silu(x, inplace=True)
    assert_close(x, F.silu(a))
    x = on(a)
    x.t().relu_()
    assert_close(x, a.relu())
    with pytest.raises(RuntimeError, match="approximate"):
        F.gelu(on(a), approximate="bogus")
    nan = torch.tensor([float("nan"), -1.0, 2.0])
    assert torch.equal(torch.relu(on(nan)).cpu().isnan(), torch.relu(nan).isnan())


REDUCTIONS = [((7,), [0]), ((5, 9), [1]), ((5, 9), [0]), ((3, 4, 5), [0, 2]), ((2, 3, 4, 5), [1, 2]),
              ((2, 3, 4, 5, 6), [1, 3]), ((13, 1, 7), [1]), ((6, 8), [])]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape,dims", REDUCTIONS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_mean(shape, dims, keepdim, dtype, strict):
    a = rand(*shape, dtype=dtype)
    for op in (torch.sum, torch.mean):
        expected = op(a.float(), dims, keepdim=keepdim).to(dtype)
        assert_close(op(on(a), dims, keepdim=keepdim), expected, scale=5)
    assert_close(on(a).sum(), a.float().sum().to(dtype), scale=10)
    assert_close(on(a).t().mean(0) if a.dim() == 2 else on(a).mean(-1), (a.float().t().mean(0) if a.dim() == 2 else
                                                                       a.float().mean(-1)).to(dtype), scale=5)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_vector_norm_orders_and_counts(dtype, strict):
    """linalg.vector_norm of every order (composed on the device, in float32 for 16 bits), counts of bool
    masks (sum of bool: int64), and var/std of no elements (NaN), against CPU."""
    a = rand(6, 7, 5, dtype=dtype)
    a.view(-1)[::4] = 0  # zeros for the order-0 count
    x = on(a)
    for ord in (1, 3, 0.5, -1.5, float("inf"), float("-inf"), 0):
        for dims, keepdim in (((1,), False), ((0, 2), True), (None, False)):
            want = torch.linalg.vector_norm(a.float(), ord, dims, keepdim=keepdim).to(dtype)
            assert_close(torch.linalg.vector_norm(x, ord, dims, keepdim=keepdim), want, scale=5, equal_nan=True)
    assert_close(torch.linalg.vector_norm(x, 1, dtype=torch.float32), torch.linalg.vector_norm(a, 1, dtype=torch.float32),
                 scale=5)
    mask = a > 0
    for dims in ((1,), (0, 2), None):
        got, want = on(mask).sum(dims), mask.sum(dims)
        assert got.dtype == torch.int64 and torch.equal(got.cpu(), want), dims
    assert torch.equal(on(mask).sum(1, dtype=torch.int32).cpu(), mask.sum(1, dtype=torch.int32))
    empty = rand(0, 4, dtype=dtype)
    for op in (torch.var, torch.std):
        assert_close(op(on(empty), 0), op(empty.float(), 0).to(dtype), equal_nan=True)
        assert_close(op(on(empty)), op(empty.float()).to(dtype), equal_nan=True)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("case", range(len(REDUCTIONS)))
def test_extrema_norm_var(case, dtype, strict):
    """amax/amin, max/min (all and .dim with indices), argmax/argmin, the 2-norm, var and std against CPU:
    odd sizes, a size-1 dim, a transposed input, ties (the first index wins, as on CPU)."""
    shape, dims = REDUCTIONS[case]
    keepdim = case % 2 == 1
    a = rand(*shape, dtype=dtype)
    a.view(-1)[::3] = a.view(-1)[0]  # ties
    x = on(a)
    same = lambda got, want: assert_close(got, want, scale=1)
    same(x.amax(dims, keepdim=keepdim), a.amax(dims, keepdim=keepdim))
    same(x.amin(dims, keepdim=keepdim), a.amin(dims, keepdim=keepdim))
    same(x.max(), a.max())
    same(x.min(), a.min())
    assert_close(torch.linalg.vector_norm(x, 2, dims, keepdim=keepdim),
                 torch.linalg.vector_norm(a.float(), 2, dims, keepdim=keepdim).to(dtype), scale=5)
    assert_close(x.norm(), a.float().norm().to(dtype), scale=5)
    for correction in (1, 0):
        # (13, 1, 7) over its size-1 dim with correction 1: 0/0, NaN on both
        assert_close(x.var(dims, correction=correction, keepdim=keepdim),
                     a.float().var(dims, correction=correction, keepdim=keepdim).to(dtype), scale=10, equal_nan=True)
        assert_close(x.std(dims, correction=correction, keepdim=keepdim),
                     a.float().std(dims, correction=correction, keepdim=keepdim).to(dtype), scale=10, equal_nan=True)
    for d in sorted({0, a.dim() - 1}) if a.dim() else []:
        for name in ("max", "min"):
            values, index = getattr(x, name)(d, keepdim=keepdim)
            want_values, want_index = getattr(a, name)(d, keepdim=keepdim)
            same(values, want_values)
            assert torch.equal(index.cpu(), want_index), (name, d)
        assert torch.equal(x.argmax(d, keepdim=keepdim).cpu(), a.argmax(d, keepdim=keepdim))
        assert torch.equal(x.argmin(d, keepdim=keepdim).cpu(), a.argmin(d, keepdim=keepdim))
    assert torch.equal(x.argmax().cpu(), a.argmax())
    assert torch.equal(x.argmin(keepdim=True).cpu(), a.argmin(keepdim=True))
    if a.dim() == 2:
        assert torch.equal(x.t().argmax(0).cpu(), a.t().argmax(0))
        same(x.t().amax(1), a.t().amax(1))


def test_extrema_edge_cases(strict):
    nan = torch.tensor([[1.0, float("nan"), 3.0], [2.0, 5.0, 5.0]])
    assert torch.equal(on(nan).amax(1).cpu().isnan(), nan.amax(1).isnan())  # NaN propagates
    assert torch.equal(on(nan).argmax(1).cpu(), nan.argmax(1))
    assert on(torch.tensor(2.5)).max().item() == 2.5 and on(torch.tensor(2.5)).argmax().item() == 0
    assert on(torch.tensor(-3.0)).norm().item() == 3.0
    assert torch.isnan(on(torch.tensor([4.0])).var().cpu())  # one element, correction 1: 0/0, as on CPU
    assert torch.isinf(on(torch.tensor([4.0, 5.0])).var(correction=2).cpu())  # dof 0
    assert_close(torch.logsumexp(on(nan), 1), torch.logsumexp(nan, 1), equal_nan=True)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.int64])
def test_isnan(dtype, strict):
    x = torch.tensor([1.0, float("nan"), float("inf"), -0.0, float("-nan")]) if dtype.is_floating_point else torch.arange(5)
    x = x.to(dtype)
    assert torch.equal(torch.isnan(on(x)).cpu(), torch.isnan(x))
    assert torch.equal(torch.isnan(on(x)[::2]).cpu(), torch.isnan(x[::2]))


def test_extrema_of_nothing_raise_the_cpu_error():
    with pytest.raises(RuntimeError, match="numel\\(\\) == 0|Expected reduction dim"):
        on(torch.ones(0)).max()
    with pytest.raises((RuntimeError, IndexError)):
        on(torch.ones(3, 0)).amax(1)


@pytest.mark.parametrize("source", [torch.float16, torch.bfloat16, torch.int64, torch.bool])
def test_reductions_with_dtype_cast_their_input(source, strict):
    a = rand(6, 9) * 4
    a = (a > 0) if source == torch.bool else a.to(source)
    for op in (torch.sum, torch.mean):
        if op is torch.mean and not source.is_floating_point:
            continue  # PyTorch's mean asks for a floating input (the fallback raises its error)
        assert_close(op(on(a), [1], dtype=torch.float32), op(a, [1], dtype=torch.float32))
        assert_close(op(on(a).t(), [0], dtype=torch.float32), op(a.t(), [0], dtype=torch.float32))
    assert_close(on(a).sum(dtype=torch.float32), a.sum(dtype=torch.float32), scale=5)
    if source.is_floating_point:
        assert_close(torch.linalg.vector_norm(on(a), dtype=torch.float32),
                     torch.linalg.vector_norm(a, dtype=torch.float32), scale=5)


def test_reduce_edge_cases():
    assert torch.equal(torch.sum(on(torch.ones(3, 0)), 1).cpu(), torch.zeros(3))
    assert torch.isnan(torch.mean(on(torch.ones(3, 0)), 1).cpu()).all()
    assert on(torch.tensor(4.0)).sum().item() == 4.0
    for dims in ([0], [-1], []):  # a 0-dim tensor takes dim 0 and -1 (this crashed: issue 18's OpInfo suite)
        for keepdim in (False, True):
            assert_close(on(torch.tensor(3.0)).mean(dims, keepdim=keepdim), torch.tensor(3.0).mean(dims, keepdim=keepdim))
            assert_close(on(torch.tensor(3.0)).sum(dims, keepdim=keepdim), torch.tensor(3.0).sum(dims, keepdim=keepdim))
    with pytest.raises(IndexError):
        on(rand(3, 4)).sum(5)
    ocltune_torch.reset_fallback_stats()
    assert on(torch.arange(5)).sum().item() == 10  # int64: the fallback
    assert "aten::sum.dim_IntList" in ocltune_torch.fallback_stats()


SOFTMAX = [((7,), 0), ((5, 9), 1), ((5, 9), 0), ((3, 4, 5), 1), ((2, 3, 4, 5, 3), 2), ((4, 1), 1)]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape,dim", SOFTMAX)
def test_softmax(shape, dim, dtype):
    a = rand(*shape, dtype=dtype) * 4
    assert_close(torch.softmax(on(a), dim), torch.softmax(a.float(), dim).to(dtype), scale=2)
    assert_close(torch.log_softmax(on(a), dim), torch.log_softmax(a.float(), dim).to(dtype), scale=2)
    assert_close(torch.softmax(on(a).transpose(0, -1), 0), torch.softmax(a.float().transpose(0, -1), 0).to(dtype),
                 scale=2)
