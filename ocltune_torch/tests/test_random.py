"""Random ops on the device (Philox4x32-10): reproducible for a seed, different between calls, and with the
right distribution (mean and variance within tolerance on 1e5 samples), with no CPU fallback."""

import math
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import ocltune_torch
from conftest import DEVICE, assert_close, rand

N = 100_000
FLOATS = [torch.float32, torch.float16, torch.bfloat16]


def stats(t):
    v = t.cpu().double()
    return v.mean().item(), v.var().item()


def philox4x32_10(counter, key):
    """Philox4x32-10 of Salmon et al. (Random123), in Python: the reference of the device's kernel."""
    m0, m1, w0, w1, mask = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85, 0xFFFFFFFF
    c, k = list(counter), list(key)
    for _ in range(10):
        p0, p1 = m0 * c[0], m1 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & mask, (p0 >> 32) ^ c[3] ^ k[1], p0 & mask]
        k = [(k[0] + w0) & mask, (k[1] + w1) & mask]
    return c


def test_philox_is_random123s_philox4x32_10():
    # Random123's known answer for counter 0 and key 0 anchors the reference; then the device's draws
    # (random_ on int64: element 2j + i takes numbers 2i and 2i + 1 of counter j, mod 2^63) for a seed
    # whose two halves are both non-zero, over several counters.
    assert philox4x32_10([0, 0, 0, 0], [0, 0]) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    seed = 0x0123456789ABCDEF
    torch.manual_seed(seed)
    drawn = torch.empty(10, dtype=torch.int64, device=DEVICE).random_().cpu().tolist()
    expected = []
    for counter in range(5):
        r = philox4x32_10([counter, 0, 0, 0], [seed & 0xFFFFFFFF, seed >> 32])
        expected += [((r[1] << 32) | r[0]) % 2**63, ((r[3] << 32) | r[2]) % 2**63]
    assert drawn == expected


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_uniform(dtype):
    torch.manual_seed(1)
    x = torch.empty(N, dtype=dtype, device=DEVICE).uniform_(-2, 3)
    mean, var = stats(x)
    assert abs(mean - 0.5) < 0.03 and abs(var - 25 / 12) < 0.05
    v = x.cpu()
    assert v.min() >= -2 and v.max() < 3
    assert torch.rand(5, 7, device=DEVICE).shape == (5, 7)
    # every element of a strided tensor is written, the gaps are not
    base = torch.zeros(40, 6, device=DEVICE)
    base[:, ::2].uniform_(5, 6)
    b = base.cpu()
    assert (b[:, ::2] >= 5).all() and (b[:, 1::2] == 0).all()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_normal(dtype):
    torch.manual_seed(2)
    x = torch.empty(N, dtype=dtype, device=DEVICE).normal_(1.5, 2.0)
    mean, var = stats(x)
    assert abs(mean - 1.5) < 0.04 and abs(var - 4.0) < 0.1
    z = torch.randn(N, device=DEVICE).cpu().double()
    assert abs(z.mean()) < 0.02 and abs(z.var() - 1) < 0.03
    assert abs(((z > 1) & (z < 2)).double().mean() - 0.1359) < 0.01  # the shape, not only two moments
    assert abs((z.abs() > 3).double().mean() - 0.0027) < 0.001


def test_normal_with_tensor_mean_and_std(strict):
    """torch.normal(Tensor, Tensor), (Tensor, float) and (float, Tensor): mean and std per element,
    broadcast, reproducible under a seed, and the CPU's error for a negative std."""
    mean = torch.tensor([-3.0, 0.0, 5.0]).repeat(N // 3)  # 3 interleaved populations
    std = torch.tensor([0.5, 1.0, 2.0]).repeat(N // 3)
    for m, s in ((mean, std), (mean, 1.5), (2.0, std)):
        args = [a.to(DEVICE) if isinstance(a, torch.Tensor) else a for a in (m, s)]
        torch.manual_seed(4)
        x = torch.normal(*args)
        torch.manual_seed(4)
        assert torch.equal(x.cpu(), torch.normal(*args).cpu())
        assert x.device.type == "ocl" and x.shape == (N // 3 * 3,)
        want_m = m if isinstance(m, torch.Tensor) else torch.full_like(std, m)
        want_s = s if isinstance(s, torch.Tensor) else torch.full_like(mean, s)
        xc = x.cpu().double()
        for k in range(3):
            sample, mu, sigma = xc[k::3], want_m[k].item(), want_s[k].item()
            assert abs(sample.mean().item() - mu) < 0.05 * max(sigma, 1), (k, sample.mean().item(), mu)
            assert abs(sample.std().item() / sigma - 1) < 0.05, (k, sample.std().item(), sigma)
    wide = torch.normal(torch.zeros(4, 1, device=DEVICE), torch.ones(1, 5, device=DEVICE))
    assert wide.shape == (4, 5)
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        torch.normal(mean.to(DEVICE), -std.to(DEVICE))
    with pytest.raises(RuntimeError, match="std >= 0.0"):
        torch.normal(mean.to(DEVICE), -1.0)


def test_reproducible_and_different():
    torch.manual_seed(7)
    a, b = torch.randn(1001, device=DEVICE).cpu(), torch.rand(33, device=DEVICE).cpu()
    torch.manual_seed(7)
    a2, b2 = torch.randn(1001, device=DEVICE).cpu(), torch.rand(33, device=DEVICE).cpu()
    assert torch.equal(a, a2) and torch.equal(b, b2)
    c = torch.randn(1001, device=DEVICE).cpu()
    assert not torch.equal(a, c)
    g = torch.Generator(device=DEVICE).manual_seed(3)
    d1 = torch.randn(50, device=DEVICE, generator=g).cpu()
    g.manual_seed(3)
    assert torch.equal(torch.randn(50, device=DEVICE, generator=g).cpu(), d1)
    torch.manual_seed(8)
    assert not torch.equal(torch.randn(1001, device=DEVICE).cpu(), a)
    state = torch.ocl.get_rng_state(DEVICE)  # without a device: the current one, which DEVICE need not be
    e = torch.rand(10, device=DEVICE).cpu()
    torch.ocl.set_rng_state(state, DEVICE)
    assert torch.equal(torch.rand(10, device=DEVICE).cpu(), e)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8, torch.bool], ids=str)
def test_bernoulli(dtype):
    torch.manual_seed(3)
    x = torch.empty(N, dtype=dtype, device=DEVICE).bernoulli_(0.3)
    v = x.cpu().double()
    assert set(v.unique().tolist()) <= {0.0, 1.0}
    assert abs(v.mean() - 0.3) < 0.01
    p = torch.linspace(0, 1, 11).repeat_interleave(10000)
    y = torch.empty(p.shape, dtype=dtype, device=DEVICE).bernoulli_(p.to(DEVICE)).cpu().double().view(11, -1)
    assert (y.mean(1) - torch.linspace(0, 1, 11).double()).abs().max() < 0.02
    assert y[0].sum() == 0 and y[-1].sum() == 10000
    z = torch.bernoulli(torch.full((N,), 0.75, device=DEVICE))  # the functional form
    assert abs(z.cpu().mean() - 0.75) < 0.01
    with pytest.raises(RuntimeError, match="probabilities"):
        torch.empty(3, device=DEVICE).bernoulli_(torch.tensor([0.5, 1.5, 0.0], device=DEVICE))


def test_random_and_randint():
    torch.manual_seed(4)
    x = torch.randint(3, 10, (N,), device=DEVICE).cpu()
    assert x.dtype == torch.int64 and x.min() == 3 and x.max() == 9
    counts = torch.bincount(x - 3).double() / N
    assert (counts - 1 / 7).abs().max() < 0.01
    y = torch.empty(N, dtype=torch.int16, device=DEVICE).random_(-5, 5).cpu()
    assert y.min() == -5 and y.max() == 4
    z = torch.empty(N, dtype=torch.uint8, device=DEVICE).random_().cpu()
    assert z.min() == 0 and z.max() == 255
    f = torch.empty(1000, device=DEVICE).random_(100).cpu()
    assert (f == f.round()).all() and f.min() >= 0 and f.max() < 100
    with pytest.raises(RuntimeError):
        torch.empty(3, device=DEVICE).random_(5, 5)


def test_randperm():
    torch.manual_seed(5)
    p = torch.randperm(1000, device=DEVICE)
    assert p.device == DEVICE and torch.equal(p.cpu().sort().values, torch.arange(1000))
    torch.manual_seed(5)
    assert torch.equal(torch.randperm(1000, device=DEVICE).cpu(), p.cpu())
    assert not torch.equal(torch.randperm(1000, device=DEVICE).cpu(), p.cpu())


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_dropout_trains_on_the_device(dtype):
    ocltune_torch.reset_fallback_stats()
    torch.manual_seed(6)
    x = (rand(200, 500).abs() + 1).to(dtype).to(DEVICE).requires_grad_()  # no zeros: y == 0 means dropped
    drop = torch.nn.Dropout(0.25).train()
    y = drop(x)
    kept = y.detach().cpu() != 0
    assert abs(kept.double().mean() - 0.75) < 0.01
    assert_close(y.detach()[kept.to(DEVICE)], (x.detach() / 0.75)[kept.to(DEVICE)].cpu())
    y.backward(torch.ones_like(y))
    assert_close(x.grad, kept.to(dtype) / 0.75)
    assert torch.equal(drop.eval()(x).detach().cpu(), x.detach().cpu())
    torch.manual_seed(6)
    assert torch.equal(torch.nn.Dropout(0.25)(x).detach().cpu(), y.detach().cpu())  # reproducible
    assert torch.equal(F.dropout(x, 1.0).detach().cpu(), torch.zeros(200, 500, dtype=dtype))
    assert torch.equal(F.dropout(x, 0.0).detach().cpu(), x.detach().cpu())
    assert ocltune_torch.fallback_stats() == {}


def test_dropout_on_strided_input():
    torch.manual_seed(9)
    x = (rand(300, 400) + 5).to(DEVICE).t()  # transposed
    y, mask = torch.native_dropout(x, 0.5, True)
    assert y.shape == x.shape and mask.dtype == torch.bool
    m = mask.cpu()
    assert torch.equal(y.cpu() != 0, m)
    assert_close(y[mask], (x[mask] * 2).cpu())
    assert abs(m.double().mean() - 0.5) < 0.01


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_dropout_draws_the_same_mask_dense_or_strided(dtype):
    # Dense operands take the vectorised kernel (dropout_dense), others the strided one: for the same
    # seed both give element e (in row-major order) the same draw, an odd count exercising the last quad.
    x = (rand(37, 2 * 53) + 5).to(dtype).to(DEVICE)[:, ::2]  # not dense: the strided kernel
    torch.manual_seed(4)
    y_strided, m_strided = torch.native_dropout(x, 0.3, True)
    torch.manual_seed(4)
    y_dense, m_dense = torch.native_dropout(x.contiguous(), 0.3, True)
    assert torch.equal(m_strided.cpu(), m_dense.cpu())
    assert torch.equal(y_strided.cpu(), y_dense.cpu())
    kept = m_dense.cpu()
    assert 0.6 < kept.double().mean() < 0.8
    assert_close(y_dense[m_dense], (x.cpu().float() / 0.7).to(dtype)[kept])
    # The backward likewise: dense operands (dropout_backward_dense) and a strided gradient.
    grad = (rand(37, 2 * 53, seed=3)).to(dtype).to(DEVICE)[:, ::2]
    expected = torch.where(kept, grad.cpu().float() / 0.7, 0.0).to(dtype)
    for g in (grad, grad.contiguous()):
        assert_close(torch.ops.aten.native_dropout_backward(g, m_dense, 1 / 0.7), expected)


STRICT_SCRIPT = """
import torch, ocltune_torch
d = "{device}"
torch.manual_seed(0)
r = [torch.rand(9, device=d), torch.randn(3, 5, device=d, dtype=torch.float16), torch.randint(0, 4, (7,), device=d),
     torch.bernoulli(torch.rand(6, device=d)), torch.empty(4, device=d).bernoulli_(0.5), torch.randperm(9, device=d),
     torch.nn.functional.dropout(torch.ones(8, device=d, requires_grad=True), 0.5), torch.rand_like(torch.ones(2, device=d)),
     torch.empty(5, device=d, dtype=torch.int32).random_()]
r[6].sum().backward()
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
