"""Creation, copies in both directions with any strides, views aliasing their base, resize_, set_, fill_."""

import pytest
import torch

from conftest import DEVICE, FLOAT_DTYPES, assert_close, rand

SHAPES = [(1,), (7,), (13, 1), (3, 5), (2, 3, 7), (1, 1, 1), (4, 1, 6, 5), (97,)]
ALL_DTYPES = FLOAT_DTYPES + [torch.float64, torch.int64, torch.int32, torch.int16, torch.uint8, torch.bool]


def values(shape, dtype, seed=0):
    x = rand(*shape, seed=seed) * 50
    if dtype == torch.bool:
        return x > 0
    return x.to(dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_round_trip(shape, dtype):
    x = values(shape, dtype)
    y = x.to(DEVICE)
    assert y.device == DEVICE and y.dtype == dtype and y.shape == x.shape
    assert torch.equal(y.cpu(), x)
    assert torch.equal(y.clone().cpu(), x)  # ocl -> ocl


def test_empty_and_zero_sized():
    assert torch.empty(0, device=DEVICE).cpu().shape == (0,)
    assert torch.empty(3, 0, 2, device=DEVICE).cpu().shape == (3, 0, 2)
    z = torch.zeros(3, 0, device=DEVICE)
    assert (z + 1).shape == (3, 0)
    assert torch.empty_strided((2, 3), (1, 2), device=DEVICE).stride() == (1, 2)
    assert torch.tensor(5.0).to(DEVICE).item() == 5.0  # 0-dim


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.uint8])
def test_non_contiguous_from_ocl(dtype):
    x = values((6, 10), dtype)
    y = x.to(DEVICE)
    for make in (lambda t: t.t(), lambda t: t[1:5, 2:9], lambda t: t[:, ::3], lambda t: t[::2].t(),
                 lambda t: t[2:3].expand(4, 10), lambda t: t.unsqueeze(0).expand(3, 6, 10)):
        assert torch.equal(make(y).cpu(), make(x))  # ocl -> cpu
        assert torch.equal(make(y).contiguous().cpu(), make(x).contiguous())  # ocl -> ocl gather


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int16, torch.bool])
@pytest.mark.parametrize("from_host", [True, False])
def test_non_contiguous_destinations(dtype, from_host):
    put = (lambda t: t) if from_host else (lambda t: t.to(DEVICE))
    base, src, col = values((6, 8), dtype, seed=2), values((4, 3), dtype, seed=1), values((6, 2), dtype, seed=3)
    y = base.to(DEVICE)
    y[1:5, 2:5] = put(src)  # a slice: gaps between rows
    y[:, ::4] = put(col)  # a column stride: gaps between elements
    expected = base.clone()
    expected[1:5, 2:5] = src
    expected[:, ::4] = col
    assert torch.equal(y.cpu(), expected)
    z = torch.empty(3, 4, dtype=dtype, device=DEVICE).t()  # dense, transposed destination
    z.copy_(put(src))
    assert torch.equal(z.cpu(), src)
    s3 = values((3, 2, 4), dtype, seed=4)
    w = torch.zeros(4, 5, 6, dtype=dtype, device=DEVICE)
    w[1:4, 1:3, 2:6] = put(s3.transpose(0, 2).contiguous().transpose(0, 2))  # gaps in two dims, strided source
    e = torch.zeros(4, 5, 6, dtype=dtype)
    e[1:4, 1:3, 2:6] = s3
    assert torch.equal(w.cpu(), e)
    s4 = values((2, 2, 3, 3), dtype, seed=5)
    v = torch.zeros(3, 4, 5, 6, dtype=dtype, device=DEVICE)
    v[::2, ::2, ::2, ::2] = put(s4)  # more gapped dims than a rectangle copy has: through the host
    e = torch.zeros(3, 4, 5, 6, dtype=dtype)
    e[::2, ::2, ::2, ::2] = s4
    assert torch.equal(v.cpu(), e)


def test_bit_patterns_survive_device_copies():
    # NaN payloads, denormals and negative zero as int32 and int64 bits through the strided copy kernel.
    patterns = torch.tensor([1, 0x7F800001, 0x7FC12345, -0x7FFFFFFF, 0x00000003, -2147483648, 0x7F7FFFFF, 12],
                            dtype=torch.int32)
    x32 = patterns.reshape(2, 4)
    assert torch.equal(x32.to(DEVICE).t().contiguous().cpu(), x32.t().contiguous())
    x64 = (patterns.to(torch.int64) << 32 | patterns.to(torch.int64) & 0xFFFFFFFF).reshape(4, 2)
    assert torch.equal(x64.to(DEVICE).t().contiguous().cpu(), x64.t().contiguous())
    f = x32.view(torch.float32)
    assert torch.equal(f.to(DEVICE).t().contiguous().cpu().view(torch.int32), f.t().contiguous().view(torch.int32))


def test_overlapping_copy():
    x = torch.arange(10.0)
    y = x.to(DEVICE)
    y[1:].copy_(y[:-1].clone())
    x[1:] = x[:-1].clone()
    assert torch.equal(y.cpu(), x)
    y = torch.arange(10.0).to(DEVICE)
    y[1:] = y[:-1]  # overlapping source and destination in one buffer
    assert torch.equal(y.cpu(), torch.cat([torch.tensor([0.0]), torch.arange(9.0)]))


@pytest.mark.parametrize("src", FLOAT_DTYPES + [torch.int64])
@pytest.mark.parametrize("dst", FLOAT_DTYPES + [torch.int32])
def test_dtype_conversions(src, dst):
    x = values((5, 3), src)
    assert torch.equal(x.to(DEVICE).to(dst).cpu(), x.to(dst))
    assert torch.equal(x.to(DEVICE, dtype=dst).cpu(), x.to(dst))


def test_views_alias_their_base():
    base = torch.zeros(4, 6, device=DEVICE)
    v = base[1:3, 2:5]
    v.fill_(3.0)
    base.view(-1)[0] = 7.0
    t = base.t()
    t[5, 3] = -1.0
    expected = torch.zeros(4, 6)
    expected[1:3, 2:5] = 3.0
    expected.view(-1)[0] = 7.0
    expected.t()[5, 3] = -1.0
    assert torch.equal(base.cpu(), expected)
    assert v.data_ptr() == base.data_ptr() + (1 * 6 + 2) * 4  # PyTorch's pointer arithmetic on views
    r = base.reshape(3, 8)
    r.mul_(2.0)
    assert torch.equal(base.cpu(), expected * 2)
    u = base.view(-1).unfold(0, 4, 2)
    assert torch.equal(u.cpu(), (expected * 2).view(-1).unfold(0, 4, 2))
    s = base.as_strided((2, 2), (1, 6), 3)
    assert torch.equal(s.cpu(), (expected * 2).as_strided((2, 2), (1, 6), 3))


def test_resize_and_set():
    x = torch.arange(6.0).to(DEVICE)
    x.resize_(2, 3)
    assert torch.equal(x.cpu(), torch.arange(6.0).reshape(2, 3))
    x.resize_(4, 5)  # grows the storage, keeping the first elements
    assert x.shape == (4, 5) and torch.equal(x.cpu().flatten()[:6], torch.arange(6.0))
    x.resize_(2)
    assert torch.equal(x.cpu(), torch.tensor([0.0, 1.0]))
    y = torch.empty(0, device=DEVICE)
    y.set_(x.untyped_storage(), 1, (2, 2), (2, 1))
    assert torch.equal(y.cpu(), torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
    y.fill_(9.0)
    assert x.cpu()[1].item() == 9.0  # set_ shares the storage
    z = torch.empty(0, device=DEVICE).set_(x)
    assert z.shape == x.shape and z.data_ptr() == x.data_ptr()
    w = torch.empty(0, device=DEVICE).set_(x.untyped_storage())
    assert w.numel() == x.untyped_storage().nbytes() // 4
    x.untyped_storage().resize_(200)
    assert x.untyped_storage().nbytes() == 200 and x.cpu()[1].item() == 9.0
    out = torch.empty(0, device=DEVICE)
    torch.abs(torch.tensor([-1.0, 2.0]).to(DEVICE), out=out)  # the fallback's _copy_from_and_resize
    assert torch.equal(out.cpu(), torch.tensor([1.0, 2.0]))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_fill_and_zero(dtype):
    value = True if dtype == torch.bool else 3
    x = torch.empty(5, 7, dtype=dtype, device=DEVICE).fill_(value)
    assert torch.equal(x.cpu(), torch.full((5, 7), value, dtype=dtype))
    x[1:4, ::2].zero_()  # gaps: a packed fill and a rectangle copy
    expected = torch.full((5, 7), value, dtype=dtype)
    expected[1:4, ::2] = 0
    assert torch.equal(x.cpu(), expected)
    x.t().fill_(torch.tensor(value).to(DEVICE))
    assert torch.equal(x.cpu(), torch.full((5, 7), value, dtype=dtype))
    assert torch.equal(torch.zeros(3, dtype=dtype, device=DEVICE).cpu(), torch.zeros(3, dtype=dtype))
    assert torch.equal(torch.ones(2, 2, dtype=dtype, device=DEVICE).cpu(), torch.ones(2, 2, dtype=dtype))


def test_fill_expanded_fills_each_location_once():
    # Filling is idempotent: PyTorch's CPU and CUDA fill_ and zero_ take an expanded tensor (and
    # _foreach_zero_ a list with one), which ocl refused until the property tests compared (issue 41).
    base = torch.zeros(2, 1, 3, device=DEVICE)
    x = base.expand(2, 4, 3)
    x.fill_(1.5)
    assert torch.equal(base.cpu(), torch.full((2, 1, 3), 1.5))
    x[:, :, 1:].zero_()  # expanded with a gap: each of the rows' last two elements once
    assert torch.equal(base.cpu(), torch.tensor([[[1.5, 0.0, 0.0]]] * 2))
    torch._foreach_zero_([x])
    assert torch.equal(base.cpu(), torch.zeros(2, 1, 3))


def test_item_and_scalars():
    x = torch.tensor([[1.5, -2.0]]).to(DEVICE)
    assert x[0, 1].item() == -2.0
    assert float(x.sum()) == -0.5
    assert_close(x * 2, torch.tensor([[3.0, -4.0]]))
