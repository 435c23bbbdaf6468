"""scaled_dot_product_attention on ocl through PyTorch's overrideable fused entry, against the CPU's SDPA.

The backend's _fused_sdp_choice_stub sends the inputs it takes to
_scaled_dot_product_fused_attention_overrideable (and autograd to its backward); each case checks that
this op is the one dispatched (OpLog, below autograd) and compares the output and the gradients of
q, k, v and a float mask with the CPU's SDPA on the same inputs and the same upstream gradient, in
strict mode. Dropout cannot be compared with the CPU's draws: it is checked for reproducibility,
against SDPA's math path on ocl (which draws the same Philox mask from the same seed) and against the
CPU given the mask read back from the output with V = I. Inputs the entry does not take (grouped-query
heads, more than 4 dims) still run through the math path.
"""

import math

import pytest
import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

from conftest import DEVICE, TOLERANCES, assert_close, rand

FUSED = "_scaled_dot_product_fused_attention_overrideable"
FUSED_BACKWARD = "_scaled_dot_product_fused_attention_overrideable_backward"


class OpLog(TorchDispatchMode):
    """The names of the aten ops that reach the backends, as autograd dispatches them (SDPA itself is
    a composite and never shows; the op it chose does)."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(func._overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def to_device(t, device):
    """t on `device` with the same strides (transposed and sliced views stay so)."""
    if t.is_contiguous():
        return t.to(device)
    base = torch.empty(0, dtype=t.dtype)
    base.set_(t.untyped_storage())
    return base.to(device).as_strided(t.shape, t.stride(), t.storage_offset())


def run_sdpa(device, q, k, v, mask=None, mask_grad=False, grad_seed=7, **kwargs):
    """F.scaled_dot_product_attention of the CPU tensors given, moved to `device` with their strides:
    the output, the gradients of q, k, v (and of the float mask when mask_grad), and the ops dispatched."""
    leaves = [to_device(x.detach(), device).requires_grad_() for x in (q, k, v)]
    m = None if mask is None else to_device(mask.detach(), device)
    if mask_grad:
        m.requires_grad_()
    with OpLog() as log:
        out = F.scaled_dot_product_attention(*leaves, attn_mask=m, **kwargs)
        g = torch.randn(out.shape, generator=torch.Generator().manual_seed(grad_seed)).to(out.dtype)
        out.backward(g.to(device))
    grads = [x.grad for x in leaves] + ([m.grad] if mask_grad else [])
    return out.detach(), grads, log.ops


def check(q, k, v, mask=None, mask_grad=False, **kwargs):
    """ocl's fused SDPA matches the CPU's, forward and backward, and is the op dispatched."""
    out_cpu, g_cpu, _ = run_sdpa("cpu", q, k, v, mask, mask_grad, **kwargs)
    out_ocl, g_ocl, ops = run_sdpa(DEVICE, q, k, v, mask, mask_grad, **kwargs)
    assert FUSED in ops and FUSED_BACKWARD in ops, ops
    assert_close(out_ocl, out_cpu)
    for name, a, b in zip(["q", "k", "v", "mask"], g_ocl, g_cpu):
        assert a is not None, name
        torch.testing.assert_close(a.cpu(), b, msg=lambda m: f"grad of {name}: {m}", **TOLERANCES[b.dtype])


def qkv(b, h, l, s, e, ev, dtype=torch.float32):
    return rand(b, h, l, e, dtype=dtype), rand(b, h, s, e, dtype=dtype, seed=1), rand(b, h, s, ev, dtype=dtype, seed=2)


# (B, H, L, S, E, Ev): L != S both ways, E != Ev, primes, batch 1, head dim 1, one query, one key.
SHAPES = [
    (2, 3, 7, 13, 5, 11),
    (1, 2, 13, 7, 8, 3),
    (1, 1, 5, 9, 1, 1),
    (3, 1, 1, 6, 4, 4),
    (2, 2, 4, 1, 6, 2),
    (2, 4, 16, 16, 32, 32),
]


@pytest.mark.parametrize("shape", SHAPES)
def test_forward_backward(shape, strict):
    check(*qkv(*shape))


@pytest.mark.parametrize("shape", [(2, 3, 7, 13, 5, 11), (1, 2, 13, 7, 8, 3), (2, 2, 9, 9, 4, 4)])
def test_causal(shape, strict):
    # Top-left aligned like PyTorch: query i sees keys 0..i, also when L != S.
    check(*qkv(*shape), is_causal=True)


def test_scale(strict):
    check(*qkv(2, 2, 5, 7, 6, 3), scale=0.3)
    check(*qkv(1, 3, 4, 4, 2, 5), scale=-1.5)


def test_non_contiguous_inputs(strict):
    b, h, l, s, e = 2, 3, 7, 5, 4
    # [B, L, H, E] transposed to [B, H, L, E], as attention modules make them; a sliced value.
    q = rand(b, l, h, e).transpose(1, 2)
    k = rand(b, s, h, e, seed=1).transpose(1, 2)
    v = rand(b, s, h, 2 * e, seed=2).transpose(1, 2)[..., ::2]
    assert not (q.is_contiguous() or k.is_contiguous() or v.is_contiguous())
    check(q, k, v)
    check(q, k, rand(b, h, e, s, seed=3).transpose(2, 3), is_causal=True)


def bool_mask(*shape, seed=5):
    g = torch.Generator().manual_seed(seed)
    m = torch.rand(shape, generator=g) < 0.7
    m[..., 0] = True  # every row keeps a key (fully masked rows: their own test)
    return m


@pytest.mark.parametrize("shape", [(7, 13), (2, 1, 1, 13), (2, 3, 7, 13), (3, 1, 13), (1, 3, 7, 1)])
def test_bool_mask(shape, strict):
    check(*qkv(2, 3, 7, 13, 5, 6), mask=bool_mask(*shape))


@pytest.mark.parametrize("shape", [(7, 13), (2, 1, 1, 13), (2, 3, 7, 13), (1, 3, 7, 1), (13,)])
def test_float_mask_and_its_gradient(shape, strict):
    mask = rand(*shape, seed=6)
    check(*qkv(2, 3, 7, 13, 5, 6), mask=mask, mask_grad=True)


def test_fully_masked_rows(strict):
    # PyTorch's CPU SDPA gives a row that may attend to no key the output 0 and gradients 0.
    q, k, v = qkv(2, 2, 5, 6, 4, 3)
    m = bool_mask(2, 1, 5, 6)
    m[0, :, 2] = False
    m[1, :, 4] = False
    check(q, k, v, mask=m)
    bias = rand(5, 6, seed=6)
    bias[1] = -math.inf
    check(q, k, v, mask=bias, mask_grad=True)
    out, _, _ = run_sdpa(DEVICE, q, k, v, bias)
    assert torch.equal(out[:, :, 1].cpu(), torch.zeros(2, 2, 3))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16_bit(dtype, strict):
    check(*qkv(2, 3, 7, 13, 8, 5, dtype=dtype))
    check(*qkv(1, 2, 9, 9, 4, 4, dtype=dtype), is_causal=True)
    check(*qkv(2, 2, 6, 5, 3, 7, dtype=dtype), mask=rand(6, 5, dtype=dtype, seed=6), mask_grad=True)
    check(*qkv(2, 2, 6, 5, 3, 7, dtype=dtype), mask=bool_mask(2, 1, 1, 5))


def test_logsumexp_and_outputs_of_the_op(strict):
    q, k, v = qkv(2, 3, 7, 13, 5, 6)
    bias = rand(7, 13, seed=6)
    bias[3] = -math.inf
    res = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(
        q.to(DEVICE), k.to(DEVICE), v.to(DEVICE), bias.to(DEVICE), scale=0.7)
    out, lse = res[0], res[1]
    scores = q @ k.transpose(-2, -1) * 0.7 + bias
    assert_close(lse, torch.logsumexp(scores, -1))  # -inf on the fully masked row, as logsumexp has it
    assert_close(out, torch.ops.aten._scaled_dot_product_attention_math(q, k, v, bias, scale=0.7)[0])
    assert (res[4], res[5]) == (7, 13)  # max_q, max_k
    assert res[6].device.type == "cpu" and res[6].dtype == torch.int64 and res[6].dim() == 0
    # SDPA hands the op float masks only; a direct caller's bool mask means the same (true = may attend).
    keep = bias != -math.inf
    as_bool = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(
        q.to(DEVICE), k.to(DEVICE), v.to(DEVICE), keep.to(DEVICE), scale=0.7)
    as_float = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(
        q.to(DEVICE), k.to(DEVICE), v.to(DEVICE), torch.zeros(7, 13).masked_fill(~keep, -math.inf).to(DEVICE),
        scale=0.7)
    assert torch.equal(as_bool[0].cpu(), as_float[0].cpu()) and torch.equal(as_bool[1].cpu(), as_float[1].cpu())


# ---- dropout ----

def dropout_run(q, k, v, p, seed, path="fused", grad_seed=7):
    """SDPA with dropout on ocl after torch.manual_seed(seed): output and grads of q, k, v. `math`:
    SDPA's math path on ocl, called directly (its native_dropout takes the same Philox numbers)."""
    leaves = [x.to(DEVICE).requires_grad_() for x in (q, k, v)]
    torch.manual_seed(seed)
    with OpLog() as log:
        if path == "fused":
            out = F.scaled_dot_product_attention(*leaves, dropout_p=p)
        else:
            out = torch.ops.aten._scaled_dot_product_attention_math(*leaves, dropout_p=p)[0]
        g = torch.randn(out.shape, generator=torch.Generator().manual_seed(grad_seed))
        out.backward(g.to(DEVICE))
    assert (FUSED in log.ops) == (path == "fused"), log.ops
    return out.detach().cpu(), [x.grad.cpu() for x in leaves]


def test_dropout_same_seed_same_draw(strict):
    q, k, v = qkv(2, 3, 7, 13, 5, 6)
    out_a, grads_a = dropout_run(q, k, v, 0.3, seed=11)
    out_b, grads_b = dropout_run(q, k, v, 0.3, seed=11)
    out_c, _ = dropout_run(q, k, v, 0.3, seed=12)
    assert torch.equal(out_a, out_b) and all(torch.equal(a, b) for a, b in zip(grads_a, grads_b))
    assert not torch.equal(out_a, out_c)
    assert not torch.allclose(out_a, F.scaled_dot_product_attention(q, k, v), atol=1e-3)


def test_dropout_matches_the_math_path_on_the_same_seed(strict):
    # The math path keeps its mask for backward; the fused op draws it again from (seed, offset): a
    # backward that drew another mask would give other gradients.
    q, k, v = qkv(2, 3, 7, 13, 5, 6)
    out_f, grads_f = dropout_run(q, k, v, 0.4, seed=3, path="fused")
    out_m, grads_m = dropout_run(q, k, v, 0.4, seed=3, path="math")
    torch.testing.assert_close(out_f, out_m, rtol=1e-4, atol=1e-5)
    for a, b in zip(grads_f, grads_m):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


def test_rows_longer_than_a_work_group_covers(strict):
    # The row passes give each of a work-group's 64 items several columns (and quads of Philox
    # numbers): 301 keys, an odd count, so that rows start at every alignment to a quad.
    q, k, v = qkv(1, 2, 6, 301, 8, 4)
    check(q, k, v)
    check(q, k, v, mask=rand(6, 301, seed=6), mask_grad=True)
    out_f, grads_f = dropout_run(q, k, v, 0.2, seed=4, path="fused")
    out_m, grads_m = dropout_run(q, k, v, 0.2, seed=4, path="math")
    torch.testing.assert_close(out_f, out_m, rtol=1e-4, atol=1e-5)
    for a, b in zip(grads_f, grads_m):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


def test_dropout_against_the_cpu_with_the_mask_read_back(strict):
    # With V = I the output is the dropped weights themselves: their zeros are the mask, and the CPU
    # computes the output and every gradient from q, k and that mask.
    b, h, l, s, e, p = 2, 2, 7, 11, 5, 0.3
    q, k = rand(b, h, l, e), rand(b, h, s, e, seed=1)
    v = torch.eye(s).expand(b, h, s, s).contiguous()
    out_ocl, grads_ocl = dropout_run(q, k, v, p, seed=5)
    keep = out_ocl != 0
    assert 0.5 < keep.float().mean().item() < 0.9
    leaves = [x.clone().requires_grad_() for x in (q, k, v)]
    weights = torch.softmax(leaves[0] @ leaves[1].transpose(-2, -1) / math.sqrt(e), -1)
    out_cpu = (weights * keep / (1 - p)) @ leaves[2]
    out_cpu.backward(torch.randn(out_cpu.shape, generator=torch.Generator().manual_seed(7)))
    torch.testing.assert_close(out_ocl, out_cpu.detach(), rtol=1e-4, atol=1e-5)
    for name, a, x in zip("qkv", grads_ocl, leaves):
        torch.testing.assert_close(a, x.grad, rtol=1e-4, atol=1e-4, msg=lambda m: f"grad of {name}: {m}")


def test_dropout_state_is_returned(strict):
    q, k, v = (x.to(DEVICE) for x in qkv(1, 2, 3, 4, 5, 6))
    torch.manual_seed(9)
    first = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(q, k, v, dropout_p=0.5)
    second = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(q, k, v, dropout_p=0.5)
    torch.manual_seed(9)
    again = torch.ops.aten._scaled_dot_product_fused_attention_overrideable(q, k, v, dropout_p=0.5)
    assert first[6].item() == second[6].item() == again[6].item()  # the seed
    assert first[7].item() == again[7].item() != second[7].item()  # the offset moved on
    assert torch.equal(first[0].cpu(), again[0].cpu())


# ---- the math path for what the entry does not take ----

def test_grouped_query_heads_take_the_math_path(strict):
    q, k, v = rand(2, 4, 5, 6), rand(2, 2, 7, 6, seed=1), rand(2, 2, 7, 3, seed=2)
    out_cpu, g_cpu, _ = run_sdpa("cpu", q, k, v, enable_gqa=True)
    out_ocl, g_ocl, ops = run_sdpa(DEVICE, q, k, v, enable_gqa=True)
    assert FUSED not in ops, ops
    assert_close(out_ocl, out_cpu)
    for a, b in zip(g_ocl, g_cpu):
        assert_close(a, b)


def test_5d_inputs_take_the_math_path(strict):
    q, k, v = rand(2, 2, 3, 5, 4), rand(2, 2, 3, 7, 4, seed=1), rand(2, 2, 3, 7, 2, seed=2)
    out_cpu, g_cpu, _ = run_sdpa("cpu", q, k, v)
    out_ocl, g_ocl, ops = run_sdpa(DEVICE, q, k, v)
    assert FUSED not in ops, ops
    assert_close(out_ocl, out_cpu)
    for a, b in zip(g_ocl, g_cpu):
        assert_close(a, b)


def test_3d_inputs(strict):
    # Unbatched [H, L, E]: torch 2.15 gives them a batch dim before it asks the backend (so the fused
    # entry runs them); torch 2.11 asks with 3-D inputs, which take the math path.
    q, k, v = rand(3, 5, 4), rand(3, 7, 4, seed=1), rand(3, 7, 2, seed=2)
    out_cpu, g_cpu, _ = run_sdpa("cpu", q, k, v)
    out_ocl, g_ocl, _ = run_sdpa(DEVICE, q, k, v)
    assert_close(out_ocl, out_cpu)
    for a, b in zip(g_ocl, g_cpu):
        assert_close(a, b)


def test_causal_with_a_mask_raises_as_pytorch(strict):
    q, k, v = (x.to(DEVICE) for x in qkv(1, 1, 3, 3, 2, 2))
    with pytest.raises(RuntimeError, match="is_causal"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(3, 3, dtype=torch.bool, device=DEVICE),
                                       is_causal=True)


def test_no_grad_runs_the_forward_only(strict):
    q, k, v = qkv(2, 2, 5, 7, 4, 3)
    with torch.no_grad(), OpLog() as log:
        out = F.scaled_dot_product_attention(q.to(DEVICE), k.to(DEVICE), v.to(DEVICE))
    assert FUSED in log.ops and FUSED_BACKWARD not in log.ops
    assert_close(out, F.scaled_dot_product_attention(q, k, v))


def test_backward_with_a_logsumexp_of_the_wrong_size_raises(strict):
    q, k, v = (x.to(DEVICE) for x in qkv(1, 2, 3, 4, 5, 5))
    with pytest.raises(RuntimeError, match="logsumexp has 5 elements, one per query row"):
        torch.ops.aten._scaled_dot_product_fused_attention_overrideable_backward(
            q, q, k, v, None, [True, True, True, False], q, torch.zeros(5, device=DEVICE), None, None, 3, 4, 0.0,
            False, torch.tensor(0), torch.tensor(0))


def test_results_are_laid_out_as_the_meta_functions_say(strict):
    """Compiled graphs view the op's results as PyTorch's meta functions lay them out (the output in the
    query's dimension order, each gradient as empty_like its input): a transformer layer under
    torch.compile failed with "view size is not compatible" while the output was [B, H, L, E]-contiguous."""
    b, h, l, s, e = 2, 3, 7, 5, 4
    q = rand(b, l, h, e).to(DEVICE).transpose(1, 2)  # [B, L, H, E] storage, as attention modules make it
    k = rand(b, s, h, e, seed=1).to(DEVICE).transpose(1, 2)
    v = rand(b, h, e, s, seed=2).to(DEVICE).transpose(2, 3)  # yet another order
    bias = rand(l, b, h, s, seed=3).to(DEVICE).permute(1, 2, 0, 3)

    def meta(t):
        return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta")

    fused = torch.ops.aten._scaled_dot_product_fused_attention_overrideable
    res = fused(q, k, v, bias)
    want = fused(meta(q), meta(k), meta(v), meta(bias))
    assert res[0].stride() == want[0].stride() and res[1].stride() == want[1].stride()
    assert_close(res[0], torch.ops.aten._scaled_dot_product_attention_math(q.cpu(), k.cpu(), v.cpu(), bias.cpu())[0])

    backward = torch.ops.aten._scaled_dot_product_fused_attention_overrideable_backward
    go = rand(b, h, l, e, seed=4).to(DEVICE)
    grads = backward(go, q, k, v, bias, [True, True, True, True], res[0], res[1], res[2], res[3], res[4], res[5],
                     0.0, False, res[6], res[7])
    want_grads = backward(meta(go), meta(q), meta(k), meta(v), meta(bias), [True, True, True, True], meta(res[0]),
                          meta(res[1]), None, None, l, s, 0.0, False, res[6], res[7])
    assert [g.stride() for g in grads] == [g.stride() for g in want_grads]
    leaves = [t.detach().cpu().requires_grad_() for t in (q, k, v, bias)]
    torch.ops.aten._scaled_dot_product_attention_math(*leaves)[0].backward(go.cpu())
    for got, leaf in zip(grads, leaves):
        assert_close(got, leaf.grad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_the_encoder_layer_fast_path_matches_the_cpu(dtype, strict):
    """nn.TransformerEncoderLayer in eval without autograd calls _transformer_encoder_layer_fwd, which the
    backend composes of its own ops (transformer_ops.cpp); a post-norm layer's two residual sums are
    read in its layer norms' kernels, never stored: two elementwise kernels fewer than pre-norm's."""
    import ocltune_torch

    x = rand(3, 9, 32, dtype=dtype)
    padding = torch.zeros(3, 9, dtype=torch.bool)
    padding[1, 6:] = True
    elementwise = {}
    for norm_first in (False, True):
        torch.manual_seed(0)
        layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, activation="gelu", batch_first=True,
                                                 norm_first=norm_first).eval()
        with torch.no_grad():
            expected = layer.double()(x.double(), src_key_padding_mask=padding).to(dtype)
            layer.to(dtype).to(DEVICE)
            ocltune_torch.reset_dispatch_stats()
            with OpLog() as log:
                got = layer(x.to(DEVICE), src_key_padding_mask=padding.to(DEVICE))
        assert "_transformer_encoder_layer_fwd" in log.ops, log.ops
        families = ocltune_torch.dispatch_stats()["devices"].get(DEVICE.index, {}).get("families", {})
        elementwise[norm_first] = sum(families.get("elementwise", {}).values())
        tolerance = dict(rtol=1e-4, atol=1e-4) if dtype == torch.float32 else dict(rtol=4e-2, atol=4e-2)
        assert_close(got, expected, **tolerance)
    assert elementwise[False] == elementwise[True] - 2, elementwise
