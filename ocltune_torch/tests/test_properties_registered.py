"""Property-based tests (hypothesis) over every op registered for the ocl device that PyTorch's OpInfo
database describes (issue 41): per op, hypothesis draws a dtype the op runs on ocl, one of the OpInfo's
samples, a layout per tensor argument (contiguous, transposed, sliced with a step, expanded from size
1, zero-size) and fresh values, calls the op (or its in-place variant) on the CPU and on ocl, and
requires the same result within conftest.TOLERANCES; where the CPU raises, ocl raises a Python
exception too and the device still works afterwards. float32 samples of ops with autograd also compare
the gradients, which is how the registered ``*_backward`` kernels are reached.

Which ops: test_opinfo.py's mapping rule (the ``aten::`` registrations for PrivateUse1 joined with
``op_db`` by name, plus its COMPOSITES), over op_db and the ``_foreach_*`` OpInfo lists. Every
registered op is either reached that way, reached through a gradient (REACHED_BY_GRADIENT, each entry
checked with the profiler that the gradient does dispatch it), or named in NOT_COVERED with its reason;
test_every_registered_op_is_accounted_for fails for a newly registered op that is none of these.

Values: tensors of the drawn dtype get fresh values drawn uniformly between the sample's smallest and
largest value (so a sample that needs positive inputs, or values in [0, 1], still gets them), or keep
the sample's; bool masks are shuffled (the count of True stays, which masked_scatter needs); index
tensors (any other dtype) keep the sample's values, which are the valid indices.

Profiles as in test_properties.py: HYPOTHESIS_PROFILE=ci (default) is derandomized, the same examples
every run; explore draws new ones and EXPLORE_EXAMPLES of them per op. A sample that needs the CPU
fallback (strict mode refuses it) is counted "fell back", not a pass; the summary at the end of the run
lists per op the examples that matched, raised on both sides, and fell back.
"""

import collections
import itertools
import os
import time
import types

import pytest
import torch
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from torch.testing._internal.common_methods_invocations import (
    foreach_binary_op_db,
    foreach_other_op_db,
    foreach_pointwise_op_db,
    foreach_reduce_op_db,
    foreach_unary_op_db,
    op_db,
)
from torch.utils import _pytree as pytree

import test_opinfo as opinfo
from conftest import DEVICE

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
# ~170 OpInfos within ~3 minutes on a 2-core PoCL machine: a few examples each in CI; explore draws more.
CI_EXAMPLES = 4
EXPLORE_EXAMPLES = 60
SAMPLES = 8  # the OpInfo's first samples hypothesis picks from (later ones are larger variations of them)

FOREACH_DB = foreach_unary_op_db + foreach_binary_op_db + foreach_pointwise_op_db + foreach_reduce_op_db + foreach_other_op_db
# Composite OpInfos beyond test_opinfo.COMPOSITES, with the registered op each reaches (checked registered below).
MORE_COMPOSITES = {
    "nn.functional.upsample_bilinear": "upsample_bilinear2d",
    "nn.functional.upsample_nearest": "upsample_nearest2d",
}
SUITE = [op for op in op_db + FOREACH_DB if opinfo.in_suite(op) or op.name in MORE_COMPOSITES]
STRICT_MESSAGE = opinfo.STRICT_MESSAGE

# Whole OpInfos that do not run here, and why (the rest of the registered ops' coverage is below):
# test_opinfo.py's, and those with no dtype the backend has (test_skips_are_needed checks they still have none).
SKIP_OPS = {
    **opinfo.SKIP_OPS,
    "nn.functional.batch_norm.without_cudnn": "a CUDA-only variant: its OpInfo lists no CPU dtype to compare with",
    "nn.functional.silu.complex": "complex dtypes only: the backend has no complex kernels",
}
NO_DTYPE = ["nn.functional.batch_norm.without_cudnn", "nn.functional.silu.complex"]

# Looser tolerances than conftest's for 16-bit results, per OpInfo: name -> (scale, reason).
FOREACH_ALPHA = ("16-bit with alpha: a + alpha * b where the terms cancel; ocl and the CPU round the same float "
                 "result differently by an ulp of the terms (found: bfloat16 0.031 on 0.16, float16 0.0039 on 0.016)")
LOOSER = {
    **opinfo.LOOSER,
    "_foreach_add": (4, FOREACH_ALPHA),
    "_foreach_sub": (4, FOREACH_ALPHA),
}

# Ops whose gradient is not determined where the input holds equal values along the reduced dimension, as an
# expanded input does: their gradients are compared for inputs without a zero stride only. name -> reason.
TIES = "which of several equal values is selected is open (test_opinfo.TIED_INDICES), so is where the gradient goes"
GRADIENT_OPEN_AT_TIES = {
    "topk": TIES,
    "sort": TIES,
    "max.reduction_with_dim": TIES,
    "min.reduction_with_dim": TIES,
    "std": "not differentiable where the values are all equal: the CPU's std is exactly 0 (gradient 0), ocl's "
           "a rounding residue of ~1e-7, which divides a residue of the same size into an O(1) gradient",
    "std.unbiased": "as std",
}

# Ops whose results hold values the op leaves undefined in some examples: name -> (when, reason).
UNDEFINED_VALUES = {
    "resize_": (lambda case, result: result.numel() > case[6],  # its OpInfo resizes a clone: no spare storage
                "growing leaves the new elements uninitialised: shape and dtype compared"),
}

# Registered ops (aten base names) that no OpInfo calls by name, reached by the gradient of the OpInfo named.
REACHED_BY_GRADIENT = {
    "_adaptive_avg_pool2d_backward": "nn.functional.adaptive_avg_pool2d",
    "adaptive_max_pool2d_backward": "nn.functional.adaptive_max_pool2d",
    "avg_pool2d_backward": "nn.functional.avg_pool2d",
    "convolution_backward_overrideable": "nn.functional.conv2d",
    "elu_backward": "nn.functional.elu",
    "embedding_dense_backward": "nn.functional.embedding",
    "gelu_backward": "nn.functional.gelu",
    "hardsigmoid_backward": "nn.functional.hardsigmoid",
    "hardswish_backward": "nn.functional.hardswish",
    "hardtanh_backward": "nn.functional.hardtanh",
    "leaky_relu_backward": "nn.functional.leaky_relu",
    "log_sigmoid_backward": "nn.functional.logsigmoid",
    "mse_loss_backward": "nn.functional.mse_loss",
    "native_batch_norm_backward": "nn.functional.batch_norm",
    "native_layer_norm_backward": "nn.functional.layer_norm",
    "nll_loss_backward": "nn.functional.nll_loss",
    "sigmoid_backward": "sigmoid",
    "silu_backward": "nn.functional.silu",
    "smooth_l1_loss_backward": "nn.functional.smooth_l1_loss",
    "softplus_backward": "nn.functional.softplus",
    "tanh_backward": "tanh",
    "threshold_backward": "nn.functional.relu",
    "unfold_backward": "unfold",
    "upsample_bilinear2d_backward": "nn.functional.upsample_bilinear",
    "upsample_nearest2d_backward": "nn.functional.upsample_nearest",
    "_log_softmax_backward_data": "log_softmax",
}

# Registered ops that this file cannot reach through an OpInfo, one line each: why, and where they are tested.
NOT_COVERED = {
    "_amp_foreach_non_finite_check_and_unscale_": "GradScaler internals, no OpInfo; test_autocast.py",
    "_amp_update_scale_": "GradScaler internals, no OpInfo; test_autocast.py",
    "_copy_from": "the device copy every test here makes (to/cpu); test_copy.py",
    "_copy_from_and_resize": "the device copy into a resized out=; test_copy.py",
    "_fused_adam_": "optimizer step, no OpInfo; test_fused_optim.py",
    "_fused_adamw_": "optimizer step, no OpInfo; test_fused_optim.py",
    "_fused_sgd_": "optimizer step, no OpInfo; test_fused_optim.py",
    "_local_scalar_dense": ".item(), no OpInfo; reached by every still_works() here and test_ops.py",
    "_native_batch_norm_legit_no_training": "eval-mode batch norm, whose OpInfo samples train; test_nn_ops.py",
    "_native_multi_head_attention": "nn.MultiheadAttention's fast path, no OpInfo; test_attention.py",
    "_reshape_alias": "a view op reached by reshape, no OpInfo of its own; test_ops.py",
    "_scaled_dot_product_fused_attention_overrideable": "SDPA's backend kernel; its OpInfo asks for float64 "
                                                        "or dropout; test_attention.py",
    "_scaled_dot_product_fused_attention_overrideable_backward": "SDPA's backward; test_attention.py",
    "_thnn_fused_gru_cell": "nn.GRUCell's fused kernel, no OpInfo; test_rnn.py",
    "_thnn_fused_gru_cell_backward": "nn.GRUCell's fused backward, no OpInfo; test_rnn.py",
    "_thnn_fused_lstm_cell": "nn.LSTMCell's fused kernel, no OpInfo; test_rnn.py",
    "_thnn_fused_lstm_cell_backward_impl": "nn.LSTMCell's fused backward, no OpInfo; test_rnn.py",
    "_transformer_encoder_layer_fwd": "nn.TransformerEncoderLayer's fast path, no OpInfo; test_attention.py",
    "nll_loss2d_backward": "the gradient of nll_loss on images, whose OpInfo samples are 1-D; test_nn_ops.py",
    "nll_loss2d_forward": "nll_loss on images, whose OpInfo samples are 1-D; test_nn_ops.py",
    "randperm": "random permutation, no OpInfo; test_random.py",
    "set_": "storage swap, no OpInfo; reached by test_opinfo.same_view here and test_copy.py",
}

# name -> Counter(match=, both_raise=, fell_back=, gradients=): examples by outcome, and those with gradients
RESULTS = collections.defaultdict(collections.Counter)

LAYOUTS = ["contiguous", "transposed", "stepped", "expanded"]


def full_name(op):
    return opinfo.full_name(op)


def dtypes_of(op):
    """The dtypes test_opinfo.py runs the op in on ocl: its float dtypes, or int32/bool where it has none."""
    return opinfo.dtypes_of(op)


def grad_dtype(op, dtype):
    return (dtype == torch.float32 and op.supports_autograd and full_name(op) not in opinfo.META_ONLY
            and torch.float32 in op.supported_backward_dtypes("cpu"))


SAMPLE_CACHE = {}


def samples(op, dtype):
    """The OpInfo's first SAMPLES samples that both sides can run (no float64, complex or sparse), made once."""
    key = (full_name(op), dtype)
    if key not in SAMPLE_CACHE:
        torch.manual_seed(0)
        found = op.sample_inputs("cpu", dtype, requires_grad=grad_dtype(op, dtype))
        SAMPLE_CACHE[key] = tuple(s for s in map(float32_result, itertools.islice(found, SAMPLES))
                                  if opinfo.skip_reason(s) is None)
    return SAMPLE_CACHE[key]


def float32_result(sample):
    """A sample that asks for a float64 result (dtype=torch.float64: softmax.with_dtype, _foreach_norm) asks
    for float32 instead, the widest dtype the backend has: the kernels are the same but for the output's."""
    if sample.kwargs.get("dtype") == torch.float64:
        sample.kwargs = {**sample.kwargs, "dtype": torch.float32}
    return sample


def lay_out(x, layout, dim):
    """x as a tensor of the layout with x's sizes and values (expanded: x's first slice along dim repeated;
    zero-size: dim cut to 0). The storage around a stepped view is zeros, so that ops that read the storage
    (as_strided) see the same bytes on both sides."""
    if layout == "transposed":
        order = list(reversed(range(x.dim())))
        return x.permute(order).contiguous().permute(order)
    if layout == "stepped":
        base = torch.zeros([*x.shape[:-1], 2 * x.shape[-1]], dtype=x.dtype)
        base[..., ::2] = x
        return base[..., ::2]
    if layout == "expanded":
        return x.narrow(dim, 0, 1).expand(x.shape)
    if layout == "zero-size":
        return x.narrow(dim, 0, 0)
    return x.contiguous()


def layouts_for(x, written):
    """The layouts x can take; not expanded where the op writes into x (the CPU refuses that every time,
    which test_properties.py checks once)."""
    if x.dim() == 0:
        return ["contiguous"]
    out = ["contiguous", "stepped"]
    if x.dim() >= 2:
        out.append("transposed")
    if any(s > 1 for s in x.shape) and not written:
        out.append("expanded")
    return sorted(out, key=LAYOUTS.index)


def fresh_values(x, dtype, keep, generator):
    """New values for x where x is data of the drawn dtype (see the module docstring), else x's own."""
    if keep or x.numel() == 0:
        return x.detach().clone()
    if x.dtype == torch.bool and dtype != torch.bool:  # a mask of a float op: same count of True, moved
        flat = x.detach().reshape(-1)
        return flat[torch.randperm(flat.numel(), generator=generator)].reshape(x.shape)
    if x.dtype != dtype:  # indices, targets, other integer arguments: their values are the valid ones
        return x.detach().clone()
    if dtype == torch.bool:
        return torch.randint(0, 2, x.shape, generator=generator).bool()
    finite = x.detach().double()[torch.isfinite(x.detach().double())]
    if finite.numel() == 0:
        return x.detach().clone()
    lo, hi = finite.min().item(), finite.max().item()
    if not dtype.is_floating_point:
        return torch.randint(int(lo), int(hi) + 1, x.shape, generator=generator).to(dtype)
    if lo == hi:  # a constant (a scalar-like tensor, a fill value): keep its magnitude and sign
        lo, hi = (lo, lo + 1.0) if lo >= 0 else (lo - 1.0, lo)
    return (lo + (hi - lo) * torch.rand(x.shape, generator=generator, dtype=torch.float64)).to(dtype)


@st.composite
def cases(draw, op, dtype):
    """(dtype, sample, (input, args, kwargs) on the CPU, their ocl copies, in place?, description)."""
    found = samples(op, dtype)
    index = draw(st.integers(0, len(found) - 1))
    sample = found[index]
    generator = torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))
    inplace = op.inplace_variant is not None and full_name(op) not in opinfo.META_ONLY and draw(st.booleans())
    # Zero-size one example in eight: one size of the first tensor, cut to 0 in every tensor that has it at
    # the same (right-aligned) dimension, so that the arguments still fit together where the sample allows.
    first = next((x for x in pytree.tree_leaves((sample.input, sample.args)) if isinstance(x, torch.Tensor)), None)
    cut = None
    if first is not None and first.numel() > 0 and first.dim() > 0 and draw(st.integers(0, 7)) == 0:
        position = draw(st.integers(-first.dim(), -1))
        cut = (position, first.shape[position])
    notes = [f"sample {index}" + (" in place" if inplace else "") + (f"; zero-size: dim {cut[0]} of size {cut[1]}"
                                                                      if cut else "")]

    def make(x, written):
        if not isinstance(x, torch.Tensor):
            return x
        keep = draw(st.booleans())
        y = fresh_values(x, dtype, keep, generator)
        if cut and y.dim() >= -cut[0] and y.shape[cut[0]] == cut[1]:
            y = y.narrow(cut[0], 0, 0)
        layout = draw(st.sampled_from(layouts_for(y, written)))
        dims = [d for d in range(y.dim()) if y.shape[d] > 1]
        dim = draw(st.sampled_from(dims)) if layout == "expanded" else 0
        y = lay_out(y, layout, dim)
        notes.append(f"{tuple(y.shape)} {str(y.dtype).removeprefix('torch.')} {layout}"
                     f"{f' dim {dim}' if layout == 'expanded' else ''}{' kept' if keep else ''}")
        if x.requires_grad and y.is_floating_point() and y.numel() > 0 and not y.requires_grad:
            y.requires_grad_(True)
        return y

    cpu = (pytree.tree_map(lambda x: make(x, inplace), sample.input),
           *pytree.tree_map(lambda x: make(x, False), (sample.args, sample.kwargs)))
    with opinfo.Strict():
        ocl = (opinfo.to_device(cpu[0], True), opinfo.to_device(cpu[1], True), opinfo.kwargs_to_device(cpu[2], True))
    numel = cpu[0].numel() if isinstance(cpu[0], torch.Tensor) else 0  # before a resize_
    return Case(dtype, sample, cpu, ocl, inplace, "; ".join(notes), numel)


class Case(tuple):
    """One drawn example: (dtype, sample, cpu arguments, ocl arguments, in place?, description, the input's
    element count before the call). Hypothesis
    prints a failing example with repr: the description, not the tensors' values."""

    def __new__(cls, *fields):
        return super().__new__(cls, fields)

    def __repr__(self):
        return f"{str(self[0]).removeprefix('torch.')} {self[5][:1000]}"


def still_works():
    x = torch.arange(6.0, device=DEVICE).view(2, 3)
    assert (x + 1).sum().item() == 21.0


def call(op, args, inplace):
    """The op (or its in-place variant) on (input, args, kwargs); returns its result and, in place, the input."""
    inp, rest, kwargs = args
    if inplace:
        with torch.no_grad():
            result = op.inplace_variant(inp, *rest, **kwargs)
        return result, inp
    return op(inp, *rest, **kwargs), None


def gradients(op, sample, args, result):
    """Gradients of sum(out * g) (g seeded) with respect to the tensors that require grad, or None."""
    leaves = [x for x in pytree.tree_leaves(args) if isinstance(x, torch.Tensor) and x.requires_grad]
    outs = [x for x in pytree.tree_leaves(sample.output_process_fn_grad(result))
            if isinstance(x, torch.Tensor) and x.requires_grad]
    if not leaves or not outs:
        return None
    g = torch.Generator().manual_seed(1)
    gs = [torch.randn(o.shape, generator=g).to(o.dtype).to(o.device) for o in outs]
    return list(torch.autograd.grad(outs, leaves, gs, allow_unused=True))


def open_gradient(op, cpu):
    """GRADIENT_OPEN_AT_TIES: an input with a zero stride (an expanded one) holds ties."""
    return full_name(op) in GRADIENT_OPEN_AT_TIES and any(
        isinstance(x, torch.Tensor) and 0 in x.stride() for x in pytree.tree_leaves(cpu))


def check(op, case):
    """One example: the CPU's outcome, then ocl's, compared. Returns the outcome for the summary."""
    dtype, sample, cpu, ocl, inplace = case[:5]
    name = full_name(op)
    try:
        expected, expected_self = call(op, cpu, inplace)
        expected_grads = None if inplace or open_gradient(op, cpu) else gradients(op, sample, cpu, expected)
    except Exception as cpu_error:  # noqa: BLE001  (the contract: ocl refuses what the CPU refuses)
        try:
            with opinfo.Strict():
                actual, _ = call(op, ocl, inplace)
                if not inplace:
                    gradients(op, sample, ocl, actual)
                pytree.tree_map(lambda x: x.cpu() if isinstance(x, torch.Tensor) else x, actual)
        except Exception:  # noqa: BLE001
            still_works()
            return "both_raise"
        raise AssertionError(f"the CPU raises {type(cpu_error).__name__}: {str(cpu_error)[:200]}; ocl does not")
    try:
        with opinfo.Strict():
            actual, actual_self = call(op, ocl, inplace)
            actual_grads = None if inplace or expected_grads is None else gradients(op, sample, ocl, actual)
    except Exception as e:  # noqa: BLE001
        if STRICT_MESSAGE in str(e):
            still_works()
            return "fell_back"
        raise AssertionError(f"ocl raises {type(e).__name__}: {' '.join(str(e).split())[:300]}; the CPU does not") from e
    with opinfo.Strict():
        if name in opinfo.TIED_INDICES:
            opinfo.compare_tied(actual, expected, laid_out(cpu), dtype, name)
        elif name in UNDEFINED_VALUES and UNDEFINED_VALUES[name][0](case, expected):
            assert (actual.shape, actual.dtype) == (expected.shape, expected.dtype)
        elif expected is not None or actual is not None:
            compare(op, sample, cpu, actual, expected, dtype, name)
        if inplace:
            compare(op, sample, cpu, actual_self, expected_self, dtype, name)
        if expected_grads is not None:
            compare_gradients(actual_grads, expected_grads)
            RESULTS[name]["gradients"] += 1
    return "match"


def laid_out(cpu):
    """What test_opinfo's comparisons read of a sample (input, args, kwargs): here the laid-out CPU ones."""
    return types.SimpleNamespace(input=cpu[0], args=cpu[1], kwargs=cpu[2])


def compare(op, sample, cpu, actual, expected, dtype, name):
    """test_opinfo.compare, with LOOSER's tolerances for 16-bit results and, as test_opinfo, a 16-bit
    result nearer float64's than the CPU's passing where float64 says so."""
    try:
        opinfo.compare(actual, expected, dtype, name)
    except AssertionError:
        if opinfo.closer_to_float64_than_the_cpu(op, laid_out(cpu), actual, expected, name):
            return
        if name not in LOOSER or name in opinfo.LOOSER or dtype not in (torch.float16, torch.bfloat16):
            raise
        tol = {k: v * LOOSER[name][0] for k, v in opinfo.TOLERANCES[dtype].items()}
        for a, e in zip(pytree.tree_leaves(actual), pytree.tree_leaves(expected)):
            if isinstance(e, torch.Tensor) and e.is_floating_point():
                torch.testing.assert_close(a.detach().cpu(), e.detach(), equal_nan=True, **tol)


def compare_gradients(actual, expected):
    """float32 gradients within conftest's tolerances, the absolute one scaled by the largest gradient of the
    example: a gradient is a difference of products as large as that (layer_norm over one element has an exact
    zero input gradient computed as rstd * (g - g) with rstd = 316, and so does its rounding noise)."""
    assert len(actual) == len(expected)
    scale = max([1.0] + [e.detach().abs().max().item() for e in expected if e is not None and e.numel()])
    tol = dict(opinfo.TOLERANCES[torch.float32])
    tol["atol"] *= scale
    for i, (a, e) in enumerate(zip(actual, expected)):
        assert (a is None) == (e is None), f"gradient {i}: {a is None=} {e is None=}"
        if e is not None:
            assert a.device.type == DEVICE.type and a.dtype == e.dtype and a.shape == e.shape, f"gradient {i}"
            torch.testing.assert_close(a.detach().cpu(), e.detach(), equal_nan=True, **tol,
                                       msg=lambda m, i=i: f"gradient {i}: {m}")


# Known defects this file found, (name, dtype or None) -> the defect: strict xfail, so a fix is noticed.
XFAIL = {
}


def params():
    out = []
    for op in SUITE:
        name = full_name(op)
        marks = []
        if name in SKIP_OPS:
            marks.append(pytest.mark.skip(reason=SKIP_OPS[name]))
        if name in XFAIL:
            marks.append(pytest.mark.xfail(strict=True, reason=XFAIL[name]))
        out.append(pytest.param(op, id=name, marks=marks))
    return out


def examples():
    # ci: no shrinking, so that a failing op costs its examples' time only (explore shrinks to a small case)
    explore = PROFILE == "explore"
    return settings(max_examples=EXPLORE_EXAMPLES if explore else CI_EXAMPLES, derandomize=not explore,
                    database=None, deadline=None, phases=list(Phase) if explore else [Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
                    print_blob=PROFILE == "explore")


@pytest.mark.parametrize("op", params())
def test_registered_op_against_cpu(op):
    dtypes = [d for d in dtypes_of(op) if samples(op, d)]
    assert dtypes, f"{full_name(op)}: no sample both sides can run (all float64, complex or sparse)"

    @examples()
    @given(data=st.data())
    def run(data):
        case = data.draw(cases(op, data.draw(st.sampled_from(dtypes), label="dtype")), label="case")
        try:
            outcome = check(op, case)
        except Exception as e:  # noqa: BLE001  (the failure names the example: dtype, sample, layouts)
            raise AssertionError(f"{case!r}:\n{e}") from None
        RESULTS[full_name(op)][outcome] += 1

    run()


def registered_base_names():
    """The backend's aten registrations for PrivateUse1, by base name (no overload)."""
    return {e.partition("::")[2].split(".")[0] for e in torch._C._dispatch_get_registrations_for_dispatch_key("PrivateUse1")
            if e.startswith("aten::")}


def reached_by_name(base):
    """The OpInfos of SUITE that call the registered op base by name (test_opinfo's rule), else []."""
    out = []
    for op in SUITE:
        names = {op.aten_name, op.name, opinfo.COMPOSITES.get(op.name, ""), MORE_COMPOSITES.get(op.name, "")}
        if any(n and n.removeprefix("nn.functional.").rstrip("_") == base.rstrip("_") for n in names):
            out.append(full_name(op))
    return out


def test_every_registered_op_is_accounted_for(capsys):
    """Each registered op: called by an OpInfo here, reached by an OpInfo's gradient here, or in NOT_COVERED
    with its reason; a newly registered op that is none of them fails this test until it is placed."""
    by_name, by_gradient, unplaced = {}, {}, []
    for base in sorted(registered_base_names()):
        if reached_by_name(base):
            by_name[base] = reached_by_name(base)
        elif base in REACHED_BY_GRADIENT:
            by_gradient[base] = REACHED_BY_GRADIENT[base]
        elif base not in NOT_COVERED:
            unplaced.append(base)
    assert not unplaced, f"registered ops with no OpInfo here and no NOT_COVERED entry: {unplaced}"
    stale = sorted(set(NOT_COVERED) - registered_base_names() | set(NOT_COVERED) & set(by_name))
    assert not stale, f"NOT_COVERED entries that are not registered or are covered after all: {stale}"
    stale = sorted(set(REACHED_BY_GRADIENT) - registered_base_names() | set(REACHED_BY_GRADIENT) & set(by_name))
    assert not stale, f"REACHED_BY_GRADIENT entries that are not registered or are called by name: {stale}"
    names = {full_name(op): op for op in SUITE}
    for base, name in by_gradient.items():
        assert name in names and grad_dtype(names[name], torch.float32), f"{base}: {name} has no float32 gradient here"
    unregistered = {k: v for k, v in MORE_COMPOSITES.items() if v not in registered_base_names()}
    assert not unregistered, f"MORE_COMPOSITES names ops the backend does not register: {unregistered}"
    total = len(registered_base_names())
    with capsys.disabled():
        print(f"\nregistered ops: {total}; called by {len(SUITE)} OpInfos: {len(by_name)}; reached by a gradient: "
              f"{len(by_gradient)}; not covered here (NOT_COVERED): {len(NOT_COVERED)}")
    assert len(by_name) + len(by_gradient) + len(NOT_COVERED) == total


def test_skips_are_needed():
    """SKIP_OPS stays honest: each of its OpInfos exists here, and those skipped for want of a dtype have none."""
    names = {full_name(op): op for op in SUITE}
    present = [n for n in SKIP_OPS if n in names]
    assert set(present) >= set(NO_DTYPE), f"SKIP_OPS names OpInfos outside the suite: {set(NO_DTYPE) - set(present)}"
    runnable = [n for n in NO_DTYPE if any(samples(names[n], d) for d in dtypes_of(names[n]))]
    assert not runnable, f"skipped for want of a dtype, but they have samples that run: {runnable}"


@pytest.mark.parametrize("base", sorted(REACHED_BY_GRADIENT))
def test_gradient_reaches_the_op(base):
    """REACHED_BY_GRADIENT is true: the gradient of a sample of the OpInfo named dispatches aten::base on ocl."""
    op = {full_name(o): o for o in SUITE}[REACHED_BY_GRADIENT[base]]
    called = set()
    for sample in samples(op, torch.float32):  # until one runs on ocl (upsample_nearest's first is 1-D: no kernel)
        try:
            with opinfo.Strict():
                args = opinfo.to_device((sample.input, sample.args, sample.kwargs), True)
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
                    gradients(op, sample, args, op(args[0], *args[1], **args[2]))
        except RuntimeError as e:
            if STRICT_MESSAGE in str(e):
                continue
            raise
        called = {e.name for e in prof.events()}
        break
    assert f"aten::{base}" in called, f"the gradient of {op.name} calls none of aten::{base}: {sorted(called)[:40]}"


class Summary:
    """Registered for this file's run: the per-op outcomes after the last test, into the terminal and CTest's log."""

    def __init__(self):
        self.start = time.monotonic()

    def pytest_terminal_summary(self, terminalreporter):
        terminalreporter.section("registered ops, property-based")
        totals = collections.Counter()
        for name in sorted(RESULTS):
            totals.update(RESULTS[name])
            c = RESULTS[name]
            terminalreporter.write_line(f"{name:44s} match {c['match']:3d}  both raise {c['both_raise']:3d}  "
                                        f"fell back {c['fell_back']:3d}  gradients compared {c['gradients']:3d}")
        terminalreporter.write_line(
            f"{len(RESULTS)} of {len(SUITE)} OpInfos ran ({PROFILE} profile, {time.monotonic() - self.start:.0f} s): "
            f"examples matched {totals['match']}, raised on both sides {totals['both_raise']}, "
            f"fell back {totals['fell_back']}; gradients compared in {totals['gradients']}")


@pytest.fixture(scope="module", autouse=True)
def summary(request):
    if not request.config.pluginmanager.has_plugin("ocltune-properties-summary"):
        request.config.pluginmanager.register(Summary(), "ocltune-properties-summary")
    yield
