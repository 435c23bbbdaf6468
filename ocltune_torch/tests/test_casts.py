"""Casts on the device between every pair of plain dtypes, against PyTorch's CPU conversion."""

import pytest
import torch

import ocltune_torch
from conftest import DEVICE

# float64 where the device has cl_khr_fp64 (PoCL does).
PLAIN_DTYPES = [torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16, torch.int8,
                torch.uint8, torch.bool]


def values(dtype, shape=(5, 7)):
    """Values every dtype holds exactly enough to convert alike on both sides: small integers, halves, zeros."""
    g = torch.Generator().manual_seed(3)
    v = torch.randint(-4, 5, shape, generator=g).to(torch.float32) * 0.5
    v.view(-1)[::6] = 0
    if dtype == torch.uint8:
        v = v.abs()
    if dtype == torch.bool:
        return v != 0
    return v.to(dtype)


@pytest.mark.parametrize("src", PLAIN_DTYPES, ids=str)
def test_every_pair(src):
    ocltune_torch.reset_fallback_stats()
    a = values(src)
    for dst in PLAIN_DTYPES:
        # negative floats to uint8 are undefined in C (and differ between compilers): not tested
        b = a.abs() if dst == torch.uint8 and src.is_floating_point else a
        got = b.to(DEVICE).to(dst)
        assert got.device == DEVICE and got.dtype == dst
        assert torch.equal(got.cpu(), b.to(dst)), (src, dst)
    assert ocltune_torch.fallback_stats() == {}


def test_truncation_rounding_and_wrap():
    f = torch.tensor([2.7, -2.7, 0.5, -0.5, 1e6 + 0.25, 3.0e4], dtype=torch.float32)
    assert torch.equal(f.to(DEVICE).to(torch.int64).cpu(), f.to(torch.int64))  # toward zero
    assert torch.equal(f.to(DEVICE).to(torch.int32).cpu(), f.to(torch.int32))
    # float32 -> fp16 / bf16 round to nearest even (values between representable ones)
    r = torch.tensor([1.0 + 2**-11, 1.0 + 3 * 2**-11, 65504.0, 1e-8, 1.0 + 2**-8, 1.0 + 3 * 2**-8, float("inf"),
                      float("-inf")], dtype=torch.float32)
    assert torch.equal(r.to(DEVICE).half().cpu(), r.half())
    assert torch.equal(r.to(DEVICE).bfloat16().cpu(), r.bfloat16())
    nan = torch.tensor([float("nan"), 0.0, -0.0, 1e-30])
    assert torch.equal(nan.to(DEVICE).bool().cpu(), nan.bool())  # NaN is true, -0.0 false
    assert torch.isnan(nan.to(DEVICE).bfloat16().cpu()[0]) and torch.isnan(nan.to(DEVICE).half().cpu()[0])
    big = torch.tensor([300, -1, 2**40 + 7, -(2**33)], dtype=torch.int64)
    assert torch.equal(big.to(DEVICE).to(torch.uint8).cpu(), big.to(torch.uint8))  # modulo 256
    assert torch.equal(big.to(DEVICE).to(torch.int32).cpu(), big.to(torch.int32))
    assert torch.equal(big.to(DEVICE).float().cpu(), big.float())


def test_non_contiguous_and_empty():
    a = torch.arange(60, dtype=torch.int64).view(3, 4, 5)
    x = a.to(DEVICE)
    for view in [lambda t: t.transpose(0, 2), lambda t: t[:, 1:3, ::2], lambda t: t[:1].expand(4, 4, 5),
                 lambda t: t.permute(1, 2, 0)]:
        assert torch.equal(view(x).float().cpu(), view(a).float())
        assert torch.equal(view(x).to(torch.int16).cpu(), view(a).to(torch.int16))
    # into a strided destination
    d = torch.zeros(5, 8, dtype=torch.float16, device=DEVICE)
    d[:, ::2] = x[0].t()
    e = torch.zeros(5, 8, dtype=torch.float16)
    e[:, ::2] = a[0].t()
    assert torch.equal(d.cpu(), e)
    assert x[:, :0].float().shape == (3, 0, 5)
    assert torch.tensor(7, device=DEVICE).half().item() == 7.0  # 0-dim


def test_copy_into_itself_with_another_dtype():
    x = torch.arange(8, dtype=torch.int32, device=DEVICE)
    y = x.view(torch.float32)  # the same bytes as float
    y.copy_(x)  # reads the ints before writing the floats
    assert torch.equal(y.cpu(), torch.arange(8, dtype=torch.float32))


def test_small_integers_stay_on_device():
    # int8, uint8, int16 and bool same-dtype copies with strides: the plain copy kernel, not the host
    for dtype in [torch.int8, torch.uint8, torch.int16, torch.bool]:
        a = values(dtype, (6, 9))
        x = a.to(DEVICE)
        assert torch.equal(x.t().contiguous().cpu(), a.t().contiguous())
        assert torch.equal(x[::2, 1::3].clone().cpu(), a[::2, 1::3].clone())
