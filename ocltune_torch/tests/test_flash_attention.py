"""The flash kernels of ocl's fused SDPA (plain/kernels/plain_flash_attention.cl, decision 0064).

OCLTUNE_SDPA=flash forces them (gemm forces the GEMM path), so every case here runs them whatever the
measured rule would choose. Results are compared with SDPA's math result on the CPU: in fp32 at the
suites' fp32 tolerance; in 16-bit against a float64 reference, allowed twice the CPU's own 16-bit
error plus a little (the flash kernels compute in fp32 and round once, the CPU rounds its 16-bit
matmuls and softmax, so neither is exact). Dropout is checked against the GEMM path, which draws
the same Philox mask (so the mask is the same forward and backward and equals today's pattern), and
at its edges; the memory test checks that no [B, H, L, S] buffer is allocated.
"""

import math

import pytest
import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

from conftest import DEVICE, TOLERANCES, rand

FUSED = "_scaled_dot_product_fused_attention_overrideable"


@pytest.fixture
def flash(monkeypatch, strict):
    monkeypatch.setenv("OCLTUNE_SDPA", "flash")


def leaves_on(device, tensors):
    """Copies on `device` with the same strides (transposed views stay transposed), requiring grad."""
    out = []
    for t in tensors:
        if t.is_contiguous():
            x = t.detach().to(device)
        else:
            base = torch.empty(0, dtype=t.dtype)
            base.set_(t.untyped_storage())
            x = base.to(device).as_strided(t.shape, t.stride(), t.storage_offset())
        out.append(x.requires_grad_())
    return out


def sdpa(device, q, k, v, mask=None, grad_seed=7, **kwargs):
    """Output and grads of q, k, v of F.scaled_dot_product_attention on `device` (CPU tensors in/out)."""
    leaves = leaves_on(device, (q, k, v))
    m = None if mask is None else mask.to(device)
    out = F.scaled_dot_product_attention(*leaves, attn_mask=m, **kwargs)
    g = torch.randn(out.shape, generator=torch.Generator().manual_seed(grad_seed)).to(out.dtype)
    out.backward(g.to(device))
    return [out.detach().cpu()] + [x.grad.cpu() for x in leaves]


def check(q, k, v, mask=None, **kwargs):
    """ocl (flash) against the CPU: fp32 at the fp32 tolerance; 16-bit within twice the CPU's own
    16-bit error against float64 (plus a floor of a few 16-bit ulps of the values' size)."""
    got = sdpa(DEVICE, q, k, v, mask, **kwargs)
    if q.dtype == torch.float32:
        for name, a, b in zip(["out", "q", "k", "v"], got, sdpa("cpu", q, k, v, mask, **kwargs)):
            torch.testing.assert_close(a, b, msg=lambda m: f"{name}: {m}", **TOLERANCES[torch.float32])
        return
    wide = [x.double() for x in (q, k, v)]
    m64 = None if mask is None or mask.dtype == torch.bool else mask.double()
    reference = sdpa("cpu", *wide, mask if m64 is None else m64, **kwargs)
    cpu16 = sdpa("cpu", q, k, v, mask, **kwargs)
    ulp = 2.0 ** -8 if q.dtype == torch.bfloat16 else 2.0 ** -11
    for name, a, c, r in zip(["out", "q", "k", "v"], got, cpu16, reference):
        err = (a.double() - r).abs().max().item()
        cpu_err = (c.double() - r).abs().max().item()
        allowed = 2 * cpu_err + 4 * ulp * r.abs().max().item()
        assert err <= allowed, f"{name}: ocl error {err:.3g} against float64, the CPU's {cpu_err:.3g}"


def qkv(b, h, l, s, e, ev, dtype=torch.float32):
    return rand(b, h, l, e, dtype=dtype), rand(b, h, s, e, dtype=dtype, seed=1), rand(b, h, s, ev, dtype=dtype, seed=2)


# (B, H, L, S, E, Ev): odd L and S across several 32-blocks, E != Ev, the head dims models use (64,
# 80, 96, 128) and odd ones (17, 40, 5), one query, one key.
SHAPES = [
    (2, 3, 7, 13, 5, 11),
    (1, 2, 37, 70, 64, 64),
    (1, 1, 45, 33, 80, 96),
    (1, 1, 19, 40, 17, 40),
    (2, 1, 1, 9, 128, 128),
    (1, 2, 33, 1, 8, 3),
]


@pytest.mark.parametrize("shape", SHAPES)
def test_forward_backward(shape, flash):
    check(*qkv(*shape))


def test_head_dim_256(flash):
    check(*qkv(1, 1, 35, 41, 256, 256), scale=0.3)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16_bit(dtype, flash):
    check(*qkv(2, 2, 37, 45, 64, 40, dtype=dtype))
    check(*qkv(1, 2, 21, 50, 64, 40, dtype=dtype), is_causal=True)


@pytest.mark.parametrize("l, s", [(37, 70), (70, 37), (33, 33)])
def test_causal_with_l_and_s_apart(l, s, flash):
    # PyTorch aligns the causal mask top-left (row i sees keys 0..i) whatever L and S are.
    check(*qkv(1, 2, l, s, 16, 24), is_causal=True)


def bool_mask(*shape, seed=5):
    m = torch.rand(shape, generator=torch.Generator().manual_seed(seed)) > 0.3
    m[..., 0] = True  # every row may attend to something
    return m


@pytest.mark.parametrize("mask_shape", [(37, 45), (2, 1, 1, 45), (1, 3, 37, 1), (2, 3, 37, 45)])
def test_masks_broadcast(mask_shape, flash):
    q, k, v = qkv(2, 3, 37, 45, 16, 24)
    check(q, k, v, mask=bool_mask(*mask_shape))
    check(q, k, v, mask=rand(*mask_shape, seed=6))


def test_fully_masked_rows_are_zero(flash):
    q, k, v = qkv(1, 2, 9, 40, 8, 8)
    m = torch.ones(9, 40, dtype=torch.bool)
    m[3] = False
    out, gq, gk, gv = sdpa(DEVICE, q, k, v, mask=m)
    assert torch.equal(out[:, :, 3], torch.zeros_like(out[:, :, 3])) and torch.equal(gq[:, :, 3], torch.zeros_like(gq[:, :, 3]))
    assert torch.isfinite(gk).all() and torch.isfinite(gv).all()
    m[3] = True
    check(q, k, v, mask=m)


def test_transposed_views_as_models_pass_them(flash):
    # Attention modules make [B, L, H, E] projections and pass .transpose(1, 2): no copy is needed.
    b, h, l, s, e = 2, 3, 37, 29, 24
    q = rand(b, l, h, e).transpose(1, 2)
    k = rand(b, s, h, e, seed=1).transpose(1, 2)
    v = rand(b, s, h, 2 * e, seed=2)[..., ::2].transpose(1, 2)  # strided along the head dim too
    assert not q.is_contiguous() and not v.is_contiguous()
    check(q, k, v)


# ---- dropout ----

def dropout_run(q, k, v, p, seed, path, grad_seed=7):
    leaves = [x.to(DEVICE).requires_grad_() for x in (q, k, v)]
    torch.manual_seed(seed)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OCLTUNE_SDPA", path)
        out = F.scaled_dot_product_attention(*leaves, dropout_p=p)
        out.backward(torch.randn(out.shape, generator=torch.Generator().manual_seed(grad_seed)).to(DEVICE))
    return [out.detach().cpu()] + [x.grad.cpu() for x in leaves]


def test_dropout_draws_the_gemm_paths_mask(strict):
    # The GEMM path keeps no mask either and draws it again in backward from (seed, offset); equal
    # outputs and gradients mean the flash kernels draw the same mask forward and backward, element
    # for element. 45 keys: rows start at every alignment to a Philox quad.
    q, k, v = qkv(2, 3, 37, 45, 16, 24)
    flash = dropout_run(q, k, v, 0.3, seed=11, path="flash")
    gemm = dropout_run(q, k, v, 0.3, seed=11, path="gemm")
    for name, a, b in zip(["out", "q", "k", "v"], flash, gemm):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5, msg=lambda m: f"{name}: {m}")
    other = dropout_run(q, k, v, 0.3, seed=12, path="flash")
    assert not torch.equal(flash[0], other[0])


def test_dropout_keep_rate_and_edges(strict):
    # V = I: the output is the dropped weights, zero where dropped.
    b, h, l, s = 2, 2, 40, 64
    q, k = rand(b, h, l, 8), rand(b, h, s, 8, seed=1)
    v = torch.eye(s).expand(b, h, s, s).contiguous()
    out = dropout_run(q, k, v, 0.25, seed=5, path="flash")[0]
    rate = (out != 0).float().mean().item()
    assert abs(rate - 0.75) < 0.02, rate  # 10240 draws: 4.4 standard deviations
    zero = dropout_run(q, k, v, 0.0, seed=5, path="flash")
    plain = sdpa("cpu", q, k, v, grad_seed=7)
    for a, c in zip(zero, plain):
        torch.testing.assert_close(a, c, **TOLERANCES[torch.float32])
    everything = dropout_run(q, k, v, 1.0, seed=5, path="flash")
    assert all(torch.equal(x, torch.zeros_like(x)) for x in everything)


# ---- the choice of path ----
# (Head dims 16 and 24 or 8 and 8 as above where the case allows: each pair is a program PoCL compiles
# on first use, most of this file's time on a cold cache.)

def kernel_names(step):
    step()  # programs built first
    torch.ocl.synchronize(DEVICE)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.OCL]) as prof:
        step()
        torch.ocl.synchronize(DEVICE)
    return {e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1}


@pytest.mark.parametrize("path", ["flash", "gemm"])
def test_the_environment_variable_forces_a_path(path, monkeypatch, strict):
    monkeypatch.setenv("OCLTUNE_SDPA", path)
    leaves = leaves_on(DEVICE, qkv(1, 2, 33, 40, 16, 24))
    names = kernel_names(lambda: F.scaled_dot_product_attention(*leaves).sum().backward())
    flash_kernels = {n for n in names if n.startswith("flash_attention")}
    gemm_kernels = {n for n in names if n.startswith("gemm") or n.startswith("attention_softmax")}
    if path == "flash":
        assert flash_kernels >= {"flash_attention_forward", "flash_attention_backward_kv",
                                 "flash_attention_backward_q"} and not gemm_kernels, names
    else:
        assert gemm_kernels and not flash_kernels, names


@pytest.mark.parametrize("causal, size, training, path", [
    (True, 512, True, "flash"), (True, 512, False, "flash"), (False, 512, True, "gemm"), (True, 256, True, "gemm"),
    (True, 256, False, "gemm")])
def test_the_measured_rule(causal, size, training, path, monkeypatch, strict):
    # Without OCLTUNE_SDPA: flash for causal calls from 512 keys and queries (where it measured faster on
    # PoCL, decision 0064), the GEMM path elsewhere; one rule with or without a backward to follow, since
    # a compiled graph's forward runs with grad mode off and must choose as its backward does.
    monkeypatch.delenv("OCLTUNE_SDPA", raising=False)
    leaves = leaves_on(DEVICE, qkv(1, 1, size, size, 8, 8))

    def step():
        if training:
            F.scaled_dot_product_attention(*leaves, is_causal=causal).sum().backward()
        else:
            with torch.no_grad():
                F.scaled_dot_product_attention(*leaves, is_causal=causal)

    names = kernel_names(step)
    assert any(n.startswith("flash_attention") for n in names) == (path == "flash"), names
    if training:
        assert ("flash_attention_backward_q" in names) == (path == "flash"), names


def test_a_mask_gradient_takes_the_gemm_path(flash):
    # dS summed is the mask's gradient: only the GEMM path has it, forward and backward.
    q, k, v = qkv(1, 2, 9, 13, 8, 8)
    mask = rand(9, 13, seed=3)
    leaves = leaves_on(DEVICE, (q, k, v)) + [mask.to(DEVICE).requires_grad_()]
    F.scaled_dot_product_attention(*leaves[:3], attn_mask=leaves[3]).sum().backward()
    cpu = [x.clone().requires_grad_() for x in (q, k, v, mask)]
    F.scaled_dot_product_attention(*cpu[:3], attn_mask=cpu[3]).sum().backward()
    for a, b in zip(leaves, cpu):
        torch.testing.assert_close(a.grad.cpu(), b.grad, **TOLERANCES[torch.float32])


def test_a_bad_value_of_the_variable_raises(monkeypatch, strict):
    monkeypatch.setenv("OCLTUNE_SDPA", "fast")
    q, k, v = (x.to(DEVICE) for x in qkv(1, 1, 4, 4, 4, 4))
    with pytest.raises(RuntimeError, match="OCLTUNE_SDPA=fast"):
        F.scaled_dot_product_attention(q, k, v)


@pytest.mark.parametrize("path", ["flash", "gemm"])
def test_no_scores_buffer_on_the_flash_path(path, monkeypatch, strict):
    monkeypatch.setenv("OCLTUNE_SDPA", path)
    b, h, l, s, e = 1, 2, 512, 512, 16
    scores_bytes = b * h * l * s * 4
    leaves = leaves_on(DEVICE, qkv(b, h, l, s, e, 24))
    grad = torch.ones(b, h, l, 24, device=DEVICE)
    F.scaled_dot_product_attention(*leaves).backward(grad)  # programs built, grads allocated
    torch.ocl.synchronize(DEVICE)
    for x in leaves:
        x.grad = None
    start = torch.ocl.memory_allocated(DEVICE)
    torch.ocl.reset_peak_memory_stats(DEVICE)
    F.scaled_dot_product_attention(*leaves).backward(grad)
    torch.ocl.synchronize(DEVICE)
    grown = torch.ocl.max_memory_allocated(DEVICE) - start
    if path == "flash":
        assert grown < scores_bytes / 2, (grown, scores_bytes)
    else:
        assert grown > scores_bytes, (grown, scores_bytes)  # the test can tell the two apart
