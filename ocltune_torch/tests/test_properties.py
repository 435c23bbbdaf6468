"""Property-based tests (hypothesis) of the registered ops against the CPU (issue 41): random shapes
(zero-size and size-1 dimensions included), random strides (transposed, sliced with steps, expanded
views), random dtypes and values. Every result equals the CPU's within the dtype's tolerance, and
arguments the CPU refuses are refused on ocl too, with a Python exception, after which the device
still works.

The examples are derandomized (the same ones every run, so CI cannot pass one day and fail the
next); HYPOTHESIS_PROFILE=explore draws new ones and more of them.
"""

import os

import pytest
import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import DEVICE, FLOAT_DTYPES, TOLERANCES

settings.register_profile(
    "ci", max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("explore", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

pytestmark = pytest.mark.usefixtures("strict")  # conftest.py: no op may fall back to the CPU

dims = st.integers(min_value=0, max_value=7)
shapes = st.lists(dims, min_size=0, max_size=4)


@st.composite
def tensors(draw, shape=None, dtype=None, positive=False):
    """A CPU tensor and the view a test passes: contiguous, transposed, sliced with a step, or
    expanded from a size-1 dimension (a zero stride)."""
    shape = draw(shapes) if shape is None else shape
    dtype = draw(st.sampled_from(FLOAT_DTYPES)) if dtype is None else dtype
    layout = draw(st.sampled_from(["contiguous", "transposed", "stepped", "expanded"]))
    g = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    if layout == "transposed" and len(shape) >= 2:
        base = torch.randn(list(reversed(shape)), generator=g)
        x = base.permute(*reversed(range(len(shape))))
    elif layout == "stepped" and len(shape) >= 1:
        base = torch.randn([*shape[:-1], 2 * shape[-1]], generator=g)
        x = base[..., ::2]
    elif layout == "expanded" and len(shape) >= 1 and shape[0] > 0:
        x = torch.randn([1, *shape[1:]], generator=g).expand(shape)
    else:
        x = torch.randn(shape, generator=g)
    if positive:
        x = x.abs() + 0.5
    return x.to(dtype) if x.dtype != dtype else x


def on_device(x):
    """x on ocl with x's strides (a view of a copy of its storage), so the kernel sees the same layout."""
    if x.is_contiguous():
        return x.to(DEVICE)
    if 0 in x.stride() and x.numel() > 0:  # an expanded view: expand the same base on the device
        base = x[tuple(slice(0, 1) if s == 0 else slice(None) for s in x.stride())]
        return on_device(base.clone() if 0 in base.stride() and base.dim() == 0 else base).expand(x.shape)
    storage = torch.empty_strided(x.size(), x.stride(), dtype=x.dtype)
    storage.copy_(x)
    out = torch.empty_strided(x.size(), x.stride(), dtype=x.dtype, device=DEVICE)
    out.copy_(storage.to(DEVICE))
    return out


def assert_like_cpu(actual, expected):
    assert actual.device.type == DEVICE.type
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    torch.testing.assert_close(actual.cpu(), expected, equal_nan=True, **TOLERANCES[expected.dtype])


def still_works():
    x = torch.arange(6.0, device=DEVICE).view(2, 3)
    assert (x + 1).sum().item() == 21.0


UNARY = {
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "neg": torch.neg,
    "abs": torch.abs,
    "sign": torch.sign,
    "exp": torch.exp,
    "sqrt": lambda x: torch.sqrt(x.abs()),
    "silu": torch.nn.functional.silu,
    "gelu": torch.nn.functional.gelu,
}


@given(op=st.sampled_from(sorted(UNARY)), x=tensors())
def test_unary(op, x):
    assert_like_cpu(UNARY[op](on_device(x)), UNARY[op](x))


BINARY = {
    "add": torch.add,
    "sub": torch.sub,
    "mul": torch.mul,
    "div": lambda a, b: torch.div(a, b.abs() + 0.5),
    "maximum": torch.maximum,
    "minimum": torch.minimum,
}


@st.composite
def broadcastable_pairs(draw):
    """Two tensors whose shapes broadcast: the second's dimensions a suffix of the first's, some 1."""
    shape = draw(shapes)
    dtype = draw(st.sampled_from(FLOAT_DTYPES))
    suffix = shape[len(shape) - draw(st.integers(0, len(shape))):]
    other = [d if draw(st.booleans()) else 1 for d in suffix]
    return draw(tensors(shape, dtype)), draw(tensors(other, dtype))


@given(op=st.sampled_from(sorted(BINARY)), pair=broadcastable_pairs())
def test_binary_broadcasting(op, pair):
    a, b = pair
    assert_like_cpu(BINARY[op](on_device(a), on_device(b)), BINARY[op](a, b))


@given(pair=broadcastable_pairs(), alpha=st.sampled_from([1.0, -2.0, 0.5]))
@example(pair=(torch.tensor([]), torch.tensor([])), alpha=-2.0)  # fell back to the CPU (found by explore)
def test_add_into_a_strided_output(pair, alpha):
    a, b = pair
    expected = torch.add(a, b, alpha=alpha)
    out = on_device(torch.empty(list(reversed(expected.shape)), dtype=a.dtype).permute(
        tuple(reversed(range(expected.dim())))))
    result = torch.add(on_device(a), on_device(b), alpha=alpha, out=out)
    assert result.data_ptr() == out.data_ptr()
    assert_like_cpu(out, expected)


@st.composite
def reductions(draw):
    x = draw(tensors(draw(st.lists(st.integers(1, 7), min_size=1, max_size=4))))
    dim = draw(st.lists(st.integers(0, x.dim() - 1), min_size=1, max_size=x.dim(), unique=True))
    return x, dim, draw(st.booleans())


@given(case=reductions(), op=st.sampled_from(["sum", "mean", "amax", "amin"]))
def test_reduction(case, op):
    x, dim, keepdim = case
    f = getattr(torch, op)
    expected = f(x.float(), dim=dim, keepdim=keepdim).to(x.dtype) if op in ("sum", "mean") else f(x, dim, keepdim)
    assert_like_cpu(f(on_device(x), dim=dim, keepdim=keepdim), expected)


@given(m=dims, k=dims, n=dims, dtype=st.sampled_from(FLOAT_DTYPES), ta=st.booleans(), tb=st.booleans(),
       seed=st.integers(0, 1000))
def test_matmul(m, k, n, dtype, ta, tb, seed):
    g = torch.Generator().manual_seed(seed)
    a = (torch.randn(k, m, generator=g).t() if ta else torch.randn(m, k, generator=g)).to(dtype)
    b = (torch.randn(n, k, generator=g).t() if tb else torch.randn(k, n, generator=g)).to(dtype)
    expected = (a.float() @ b.float()).to(dtype)
    tol = {k_: v * max(1, k) ** 0.5 for k_, v in TOLERANCES[dtype].items()}  # sums of k products
    actual = on_device(a) @ on_device(b)
    assert actual.shape == expected.shape and actual.dtype == dtype
    torch.testing.assert_close(actual.cpu(), expected, **tol)


@given(n=st.integers(1, 9), picks=st.lists(st.integers(-20, 20), min_size=1, max_size=6))
def test_index_select_refuses_an_index_out_of_range(n, picks):
    x = torch.randn(n, 3)
    index = torch.tensor(picks)
    try:
        expected = x.index_select(0, index)
    except (IndexError, RuntimeError):
        with pytest.raises((IndexError, RuntimeError)):
            x.to(DEVICE).index_select(0, index.to(DEVICE)).cpu()
        still_works()
        return
    assert_like_cpu(x.to(DEVICE).index_select(0, index.to(DEVICE)), expected)


@given(pair=broadcastable_pairs())
def test_mismatched_shapes_are_refused(pair):
    a, b = pair
    if a.dim() == 0 or a.shape[-1] in (0, 1):
        return
    bad = torch.randn(a.shape[-1] + 1, dtype=a.dtype)
    with pytest.raises(RuntimeError):
        torch.add(a, bad)
    with pytest.raises(RuntimeError):
        torch.add(on_device(a), bad.to(DEVICE))
    still_works()


def test_a_cpu_and_an_ocl_operand_are_refused():
    with pytest.raises(RuntimeError, match="device"):
        torch.randn(3, device=DEVICE) + torch.randn(3)
    still_works()


def test_an_output_overlapping_its_input_is_refused():
    x = torch.randn(4, 1, device=DEVICE)
    out = torch.empty(1, device=DEVICE).expand(4)  # four elements, one memory location
    with pytest.raises(RuntimeError):
        torch.add(x.view(4), 1, out=out)
    still_works()
