"""PyTorch's OpInfo database (issue 18) as an external conformance suite: the samples PyTorch tests its
own backends with, run on the ocl device and compared with the CPU.

Which ops (the mapping rule): the backend's native kernels are the ``aten::`` entries of
``torch._C._dispatch_get_registrations_for_dispatch_key("PrivateUse1")`` (the boxed CPU fallback is
not an entry there). An OpInfo of ``op_db`` is in the suite when

1. its ``aten_name`` or its ``name``, without a leading ``nn.functional.`` and a trailing ``_``, is the
   base name (no overload) of such an entry, either form: ``abs`` for ``aten::abs``, ``fill`` for
   ``aten::fill_.Scalar``, ``nn.functional.elu`` for ``aten::elu`` (NOT_THE_OP lists the names that
   match an op they do not call); or
2. it is in COMPOSITES: OpInfos of composite ops (CompositeImplicitAutograd, no kernel of any backend)
   whose decomposition reaches a registered op as its work, each with the op it reaches (the file
   checks that op is registered, so that the table cannot go stale silently).

How: per OpInfo and dtype (float32, and float16/bfloat16 where the OpInfo's CPU dtypes list them; the
integer and bool dtypes for ops that list no float dtype), the first SAMPLES (SAMPLES_16BIT) samples of
``op.sample_inputs("cpu", dtype)`` run on the CPU and, every tensor moved to ocl (and a ``device=``
keyword of a factory set to ocl), on the device, under ``OCLTUNE_TORCH_STRICT=1``. A sample that needs
the CPU fallback raises there and counts as "fell back", not as a pass; the rest must match the CPU
within conftest's TOLERANCES (exact for integer and bool results). float32 OpInfos that support
autograd also compare their gradients (the first BACKWARD_SAMPLES samples, test_backward).

Plain pytest parametrisation, not PyTorch's device-type machinery: ``instantiate_device_type_tests(...,
only_for="privateuse1")`` with ``@ops`` does instantiate on ocl in torch 2.15 (TestXPRIVATEUSE1, test
names ending ``_ocl_float32``), but its generated unittest methods take per-(op, dtype) marks only
through DecorateInfo entries added to copies of the OpInfos, its dtypes for privateuse1 are the CPU
dtypes anyway, and the per-sample "fell back" count and the summary need our own loop all the same;
pytest parameters carry a strict xfail or a skip with its reason directly.

Every op or sample skipped has its reason in SKIP_OPS / SKIP_SAMPLE_RULES, every expected failure in
XFAIL (strict: an unexpected pass fails the run); the ops whose index outputs may order ties
differently (sort, topk) are checked by what their indices select, TIED_INDICES. The end of the run prints (into the test log) per
op: samples passed, fell back, skipped, failed, and the totals.

``OCLTUNE_OPINFO_SAMPLES`` changes the number of samples per op and dtype (default 8),
``OCLTUNE_OPINFO_SAMPLES_16BIT`` that of float16 and bfloat16 (default 5); PoCL compiles each new kernel
on first use, which is most of this file's time: about 4 minutes with cold caches on a 2-core PoCL
machine, 25 s warm.
"""

import collections
import os
import time

import pytest
import torch
from torch.testing._internal.common_methods_invocations import op_db
from torch.utils import _pytree as pytree

import ocltune_torch
from conftest import DEVICE, TOLERANCES

SAMPLES = int(os.environ.get("OCLTUNE_OPINFO_SAMPLES", "8"))
# float16 and bfloat16 compile every kernel again for the same shapes: fewer samples keep a cold run
# (nothing in PoCL's and ocltune's binary caches) within CI's few minutes.
SAMPLES_16BIT = int(os.environ.get("OCLTUNE_OPINFO_SAMPLES_16BIT", "5"))
BACKWARD_SAMPLES = 2
FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
OTHER_DTYPES = (torch.int32, torch.bool)  # for the ops whose OpInfo lists no float dtype
STRICT_MESSAGE = "OCLTUNE_TORCH_STRICT=1 forbids"

# Rule 2: composite OpInfos and the registered op (aten::name, any overload) each one reaches.
COMPOSITES = {
    "nn.functional.conv1d": "convolution_overrideable",
    "nn.functional.conv2d": "convolution_overrideable",
    "nn.functional.conv_transpose1d": "convolution_overrideable",
    "nn.functional.conv_transpose2d": "convolution_overrideable",
    "softmax": "_softmax",
    "log_softmax": "_log_softmax",
    "nn.functional.layer_norm": "native_layer_norm",
    "nn.functional.batch_norm": "native_batch_norm",
    "nn.functional.max_pool2d": "max_pool2d_with_indices",
    "nn.functional.adaptive_avg_pool2d": "_adaptive_avg_pool2d",
    "nn.functional.silu": "silu",
    "nn.functional.selu": "elu",
    "nn.functional.celu": "elu",
    "nn.functional.hardsigmoid": "hardsigmoid",
    "nn.functional.relu6": "hardtanh",
    "nn.functional.logsigmoid": "log_sigmoid_forward",
    "nn.functional.mse_loss": "mse_loss",
    "nn.functional.nll_loss": "nll_loss_forward",
    "nn.functional.cross_entropy": "nll_loss_forward",
    "nn.functional.binary_cross_entropy_with_logits": "log_sigmoid_forward",
    "nn.functional.embedding": "index_select",
    "nn.functional.linear": "addmm",
    "matmul": "mm",
    "mv": "addmv",
    "__getitem__": "index",
    "index_put": "_index_put_impl_",
    "stack": "cat",
    "constant_pad_nd": "fill_",
    "true_divide": "div",
    "square": "pow",
    "argwhere": "nonzero",
    "nn.functional.dropout": "native_dropout",
    "randint": "random_",
    "randn": "normal_",
    "zeros": "zero_",
    "ones": "fill_",
    "full": "fill_",
}

# OpInfos whose name, without the prefix, is a registered op that they do not call.
NOT_THE_OP = {
    "nn.functional.unfold": "im2col (sliding blocks), not aten::unfold (a view)",
}

# Ops whose values cannot match the CPU's: compared by shape, dtype and device only (still in strict mode,
# so a fallback is noticed). Reason per op.
META_ONLY = {
    "empty": "uninitialised memory",
    "empty_strided": "uninitialised memory",
    "normal": "random: the ocl generator (Philox) is not the CPU's; test_random.py checks the distributions",
    "normal.in_place": "random: the ocl generator (Philox) is not the CPU's; test_random.py checks them",
    "normal.number_mean": "random: the ocl generator (Philox) is not the CPU's; test_random.py checks them",
    "uniform": "random: the ocl generator (Philox) is not the CPU's; test_random.py checks the distribution",
    "bernoulli": "random: the ocl generator (Philox) is not the CPU's; test_random.py checks it",
    "randn": "random: the ocl generator (Philox) is not the CPU's; test_random.py checks it",
    "randint": "random: the ocl generator (Philox) is not the CPU's; test_random.py checks it",
    "nn.functional.dropout": "random mask: the ocl generator (Philox) is not the CPU's; test_random.py checks it",
}

# Whole OpInfos (name or name.variant) of the set that do not run, and why.
SKIP_OPS = {
    "bmm.triton_optimized": "a Triton benchmark variant of bmm (its samples are bmm's, tested as bmm)",
    "addmm.decomposed": "addmm composed of mm and add in Python: its ops are tested as mm and add",
}

# A sample that contains one of these runs on neither side, counted as skipped with the reason (and so
# does one whose dtype= keyword asks for float64, skip_reason).
SKIP_SAMPLE_RULES = [
    (lambda t: t.dtype == torch.float64, "needs float64: the backend runs only casts and element-wise ops in float64"),
    (lambda t: t.is_complex(), "complex: the backend has no complex kernels"),
    (lambda t: t.layout != torch.strided, "sparse or other non-strided layout: the backend has strided tensors only"),
]

# Expected failures (strict): (name or name.variant, dtype or None for every dtype) -> (reason, the
# first sample that fails; with fewer samples the entry does not apply). None at present: addcmul and
# addcdiv in 16 bits were, until they computed in float32 (ocltune_torch/csrc/elementwise_ops.cpp, addc).
XFAIL = {}


def sample_count(dtype):
    return SAMPLES_16BIT if dtype in (torch.float16, torch.bfloat16) else SAMPLES


def xfail_reason(name, dtype, count):
    """The reason of the XFAIL entry for (name, dtype) that applies to count samples, else None."""
    entry = XFAIL.get((name, dtype)) or XFAIL.get((name, None))
    return entry[0] if entry and count > entry[1] else None

# Ops whose outputs after the first (mean and rstd, save_mean and save_invstd) the backend keeps in
# float32 for 16-bit inputs, as PyTorch's CUDA kernels do (torch._refs.native_layer_norm casts them
# to the input's dtype on the CPU only): those outputs are compared as values, at the 16-bit tolerance.
FLOAT32_STATISTICS = {
    "native_layer_norm": "mean and rstd in float32 for 16-bit inputs, as on CUDA",
    "native_batch_norm": "save_mean and save_invstd in float32 for 16-bit inputs, as on CUDA",
    "_native_batch_norm_legit": "save_mean and save_invstd in float32 for 16-bit inputs, as on CUDA",
}

# Looser tolerances than conftest's, per OpInfo, with the reason: name -> (scale of the tolerances, reason).
LOOSER = {
    "baddbmm": (4, "16-bit with beta != 0: ocltune's 16-bit GEMM runs at beta 0 (its decision cache keeps one plan "
                   "per shape), so alpha * a @ b is rounded to 16 bits before beta * self is added, as in addmm; the "
                   "CPU rounds once, and where the two terms cancel they differ by a few ulps of the larger one"),
}

# Ops whose index output may differ from the CPU's where values tie (either order is a correct answer):
# name -> (reason, the sample's dim from its args and kwargs). Their values are compared as any output;
# their indices must select the CPU's values from the input along that dim.
TIED_INDICES = {
    "sort": (
        "stable=False leaves the order of equal values open: ocltune's merge sort is stable, the CPU's is not",
        lambda args, kwargs: kwargs.get("dim", args[0] if args else -1),
    ),
    "topk": (
        "which of several equal values topk returns is open (the CPU's selection is not stable)",
        lambda args, kwargs: kwargs.get("dim", args[1] if len(args) > 1 else -1),
    ),
}

# name -> Counter(pass=, fell_back=, skipped=, failed=) over samples, and the ops that fell back.
RESULTS = collections.defaultdict(collections.Counter)
FELL_BACK_TO = collections.defaultdict(collections.Counter)
SKIP_REASONS = collections.defaultdict(collections.Counter)


def registered_ops():
    names = set()
    for entry in torch._C._dispatch_get_registrations_for_dispatch_key("PrivateUse1"):
        namespace, _, rest = entry.partition("::")
        if namespace == "aten":
            base = rest.split(".")[0]
            names.add(base)
            names.add(base.rstrip("_") or base)
    return names


REGISTERED = registered_ops()


def full_name(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def in_suite(op):
    if op.name in COMPOSITES:
        return True
    if op.name in NOT_THE_OP:
        return False
    names = {op.aten_name, op.name}
    return any(n.removeprefix("nn.functional.").rstrip("_") in REGISTERED for n in names)


SUITE = [op for op in op_db if in_suite(op)]


def dtypes_of(op):
    listed = op.supported_dtypes("cpu")
    floats = [d for d in FLOAT_DTYPES if d in listed]
    return floats or [d for d in OTHER_DTYPES if d in listed]


def params():
    out = []
    for op in SUITE:
        name = full_name(op)
        for dtype in dtypes_of(op):
            marks = []
            if name in SKIP_OPS:
                marks.append(pytest.mark.skip(reason=SKIP_OPS[name]))
            reason = xfail_reason(name, dtype, sample_count(dtype))
            if reason:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            out.append(pytest.param(op, dtype, id=f"{name}-{str(dtype).replace('torch.', '')}", marks=marks))
    return out


def backward_params():
    out = []
    for op in SUITE:
        name = full_name(op)
        if not op.supports_autograd or name in META_ONLY or torch.float32 not in op.supported_backward_dtypes("cpu"):
            continue
        marks = []
        if name in SKIP_OPS:
            marks.append(pytest.mark.skip(reason=SKIP_OPS[name]))
        reason = xfail_reason(name + ".backward", None, BACKWARD_SAMPLES)
        if reason:
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        out.append(pytest.param(op, id=name, marks=marks))
    return out


def test_composites_reach_registered_ops():
    missing = {k: v for k, v in COMPOSITES.items() if v.rstrip("_") not in REGISTERED and v not in REGISTERED}
    assert not missing, f"COMPOSITES names ops the backend does not register: {missing}"
    names = {op.name for op in op_db}
    assert not set(COMPOSITES) - names, f"COMPOSITES names no OpInfo: {set(COMPOSITES) - names}"
    # An entry this torch's op_db lacks is a variant of another version (torch 2.11 has neither
    # skipped variant); one that op_db has must be in the suite, or the entry is stale.
    stale = (set(SKIP_OPS) & {full_name(op) for op in op_db}) - {full_name(op) for op in SUITE}
    assert not stale, f"SKIP_OPS names ops outside the suite: {stale}"
    assert not set(NOT_THE_OP) - names, f"NOT_THE_OP names no OpInfo: {set(NOT_THE_OP) - names}"


def to_device(obj, requires_grad=False):
    """obj with every tensor copied to ocl (requires_grad as the source's when asked) and device="cpu" as ocl."""

    def move(x):
        if isinstance(x, torch.Tensor):
            y = same_view(x.detach())
            return y.requires_grad_(x.requires_grad) if requires_grad else y
        if isinstance(x, torch.device) and x.type == "cpu":
            return DEVICE
        return x

    return pytree.tree_map(move, obj)


def same_view(x):
    """x on ocl as the same view: a tensor with an offset, gaps or overlaps (a slice, an expand, as_strided's
    partial views) keeps its sizes, strides and offset into a copy of its whole storage; a plain one is copied."""
    whole = x.untyped_storage().nbytes() == x.numel() * x.element_size()
    if x.layout != torch.strided or (x.is_contiguous() and x.storage_offset() == 0 and whole):
        return x.to(DEVICE)
    base = torch.empty(0, dtype=x.dtype).set_(x.untyped_storage()).to(DEVICE)
    return base.as_strided(x.shape, x.stride(), x.storage_offset())


def kwargs_to_device(kwargs, requires_grad=False):
    out = to_device(kwargs, requires_grad)
    if out.get("device") in ("cpu", torch.device("cpu")):
        out["device"] = DEVICE
    return out


def skip_reason(sample):
    for leaf in pytree.tree_leaves((sample.input, sample.args, sample.kwargs)):
        if isinstance(leaf, torch.Tensor):
            for rule, reason in SKIP_SAMPLE_RULES:
                if rule(leaf):
                    return reason
    if sample.kwargs.get("dtype") == torch.float64:  # the with_dtype variants of softmax and log_softmax
        return ("asks for a float64 result (dtype=torch.float64): the backend runs only casts and element-wise ops "
                "in float64")
    return None


class Strict:
    """OCLTUNE_TORCH_STRICT=1 while it is entered (the backend reads the variable at each fallback)."""

    def __enter__(self):
        self.saved = os.environ.get("OCLTUNE_TORCH_STRICT")
        os.environ["OCLTUNE_TORCH_STRICT"] = "1"

    def __exit__(self, *exc):
        if self.saved is None:
            del os.environ["OCLTUNE_TORCH_STRICT"]
        else:
            os.environ["OCLTUNE_TORCH_STRICT"] = self.saved
        return False


def fallback_name(error):
    text = str(error)
    start = text.find("ocltune_torch: ")
    return text[start + len("ocltune_torch: "):].split(" ")[0] if start >= 0 else "?"


def compare(actual, expected, dtype, name):
    """Every tensor of actual on ocl and equal to expected's within the tolerances."""
    a_leaves, a_spec = pytree.tree_flatten(actual)
    e_leaves, e_spec = pytree.tree_flatten(expected)
    assert a_spec == e_spec, f"result structure {a_spec} != {e_spec}"
    tol = dict(TOLERANCES.get(dtype, dict(rtol=0, atol=0)))
    if name in LOOSER:
        tol = {k: v * LOOSER[name][0] for k, v in tol.items()}
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        if isinstance(e, torch.Tensor):
            assert isinstance(a, torch.Tensor), f"{type(a)} is no tensor"
            assert a.device.type == DEVICE.type, f"result on {a.device}"
            assert same_layout(a, e), f"result {i} laid out {a.stride()}, the CPU's {e.stride()}"
            a = a.detach().cpu()
            e = e.detach()
            if name in META_ONLY:
                assert (a.shape, a.dtype) == (e.shape, e.dtype), f"{a.shape} {a.dtype} != {e.shape} {e.dtype}"
                continue
            if i > 0 and name in FLOAT32_STATISTICS and a.dtype == torch.float32 and e.dtype in FLOAT_DTYPES:
                a = a.to(e.dtype)
            if e.is_floating_point() or e.is_complex():
                torch.testing.assert_close(a, e, equal_nan=True, **tol)
            else:
                torch.testing.assert_close(a, e, rtol=0, atol=0)
        elif name not in META_ONLY:
            assert a == e or (a != a and e != e), f"{a!r} != {e!r}"


def same_layout(actual, expected):
    """Equal strides along the dims of more than one element (the others' strides mean nothing): a result
    laid out otherwise than the CPU's TensorIterator lays it out breaks the views compiled graphs make of
    it, since the meta functions they trace with lay it out as the CPU does."""
    if (actual.shape != expected.shape or expected.numel() == 0 or actual.layout != torch.strided
            or expected.layout != torch.strided):
        return True
    return all(n <= 1 or a == e for n, a, e in zip(expected.shape, actual.stride(), expected.stride()))


def compare_tied(actual, expected, sample, dtype, name):
    """TIED_INDICES: (values, indices) of ocl against the CPU's; the indices by what they select."""
    compare(actual[0], expected[0], dtype, name)
    indices = actual[1]
    assert indices.device.type == DEVICE.type, f"result on {indices.device}"
    indices = indices.cpu()
    assert (indices.shape, indices.dtype) == (expected[1].shape, expected[1].dtype), f"{indices.shape} {indices.dtype}"
    if sample.input.dim() == 0:
        torch.testing.assert_close(indices, expected[1], rtol=0, atol=0)
        return
    dim = TIED_INDICES[name][1](sample.args, sample.kwargs)
    torch.testing.assert_close(sample.input.gather(dim, indices), expected[0], rtol=0, atol=0, equal_nan=True)


def samples(op, dtype, requires_grad=False, count=SAMPLES):
    torch.manual_seed(0)
    out = []
    for sample in op.sample_inputs("cpu", dtype, requires_grad=requires_grad):
        out.append(sample)
        if len(out) == count:
            break
    return out


def run_sample(op, sample):
    """(outcome, detail): "pass", "fell_back" (the op that fell back), "skipped" (why) or "failed" (why)."""
    name = full_name(op)
    reason = skip_reason(sample)
    if reason:
        return "skipped", reason
    with Strict():
        d_input = to_device(sample.input)
        d_args = to_device(sample.args)
        d_kwargs = kwargs_to_device(sample.kwargs)
    try:
        expected = op(sample.input, *sample.args, **sample.kwargs)
    except Exception as e:  # noqa: BLE001  (a sample the CPU rejects proves nothing about ocl)
        return "skipped", f"the CPU rejects it ({type(e).__name__})"
    try:
        with Strict():
            actual = op(d_input, *d_args, **d_kwargs)
    except Exception as e:  # noqa: BLE001
        if STRICT_MESSAGE in str(e):
            return "fell_back", fallback_name(e)
        return "failed", f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    try:
        with Strict():
            if name in TIED_INDICES:
                compare_tied(actual, expected, sample, sample_dtype(sample, op), name)
            else:
                compare(actual, expected, sample_dtype(sample, op), name)
    except Exception as e:  # noqa: BLE001
        if STRICT_MESSAGE in str(e):
            return "fell_back", fallback_name(e)
        if closer_to_float64_than_the_cpu(op, sample, actual, expected, name):
            return "pass", ""
        return "failed", f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
    return "pass", ""


def as_float64(obj):
    return pytree.tree_map(lambda x: x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x, obj)


def closer_to_float64_than_the_cpu(op, sample, actual, expected, name):
    """A 16-bit result that misses the CPU's but is within the tolerances of the float64 result rounded to
    the dtype, where the CPU's is farther from it. Some of the CPU's 16-bit kernels round intermediates,
    depending on the host: bfloat16 conv_transpose2d's first sample is 0.79 from float64 on the CPU where
    rounding the float64 result costs 0.46 (ocl's error), so there float64 decides, not the CPU."""
    dtype = sample_dtype(sample, op)
    if dtype not in (torch.float16, torch.bfloat16) or name in TIED_INDICES:
        return False
    try:
        reference = op(as_float64(sample.input), *as_float64(sample.args), **as_float64(sample.kwargs))
    except Exception:  # noqa: BLE001  (an op without float64 on the CPU: the CPU's result stands)
        return False
    a_leaves, e_leaves, r_leaves = (pytree.tree_leaves(x) for x in (actual, expected, reference))
    if len(a_leaves) != len(r_leaves):
        return False
    cpu_error = ocl_error = 0.0
    for a, e, r in zip(a_leaves, e_leaves, r_leaves):
        if isinstance(r, torch.Tensor) and r.is_floating_point() and isinstance(a, torch.Tensor):
            a64 = a.detach().cpu().double()
            ocl_error = max(ocl_error, (a64 - r).abs().nan_to_num(0).max().item() if r.numel() else 0.0)
            cpu_error = max(cpu_error, (e.detach().double() - r).abs().nan_to_num(0).max().item() if r.numel() else 0.0)
    if ocl_error >= cpu_error:
        return False
    rounded = pytree.tree_map(lambda x: x.to(dtype) if isinstance(x, torch.Tensor) and x.is_floating_point() else x,
                              reference)
    try:
        with Strict():
            compare(actual, rounded, dtype, name)
    except Exception:  # noqa: BLE001
        return False
    return True


def sample_dtype(sample, op):
    leaves = [x for x in pytree.tree_leaves((sample.input, sample.args)) if isinstance(x, torch.Tensor)]
    return leaves[0].dtype if leaves else torch.float32


def record(key, outcome, detail):
    RESULTS[key][outcome] += 1
    if outcome == "fell_back":
        FELL_BACK_TO[key][detail] += 1
    elif outcome == "skipped":
        SKIP_REASONS[key][detail] += 1


@pytest.mark.parametrize("op,dtype", params())
def test_op(op, dtype):
    key = f"{full_name(op)} {str(dtype).replace('torch.', '')}"
    expected_failure = xfail_reason(full_name(op), dtype, sample_count(dtype)) is not None
    failures = []
    for i, sample in enumerate(samples(op, dtype, count=sample_count(dtype))):
        outcome, detail = run_sample(op, sample)
        record(key, "xfail" if outcome == "failed" and expected_failure else outcome, detail)
        if outcome == "failed":
            failures.append(f"sample {i} ({sample.name or sample.summary()[:120]}): {detail}")
    assert not failures, "\n".join(failures)


def grads(op, sample, device):
    """The gradients of sum(out * g) for the inputs of sample that require grad (g fixed, seeded)."""
    if device is None:
        inp, args, kwargs = sample.input, sample.args, sample.kwargs
    else:
        inp, args, kwargs = to_device(sample.input, True), to_device(sample.args, True), kwargs_to_device(sample.kwargs, True)
    leaves = [x for x in pytree.tree_leaves((inp, args, kwargs)) if isinstance(x, torch.Tensor) and x.requires_grad]
    out = op(inp, *args, **kwargs)
    out = sample.output_process_fn_grad(out)
    outs = [x for x in pytree.tree_leaves(out) if isinstance(x, torch.Tensor) and x.requires_grad]
    if not outs or not leaves:
        return None
    gen = torch.Generator().manual_seed(1)
    gs = [torch.randn(o.shape, generator=gen, dtype=torch.float32).to(o.dtype) for o in outs]
    if device is not None:
        gs = [g.to(device) for g in gs]
    return torch.autograd.grad(outs, leaves, gs, allow_unused=True)


@pytest.mark.parametrize("op", backward_params())
def test_backward(op):
    key = f"{full_name(op)} backward"
    failures = []
    for i, sample in enumerate(samples(op, torch.float32, requires_grad=True, count=BACKWARD_SAMPLES)):
        reason = skip_reason(sample)
        if reason:
            record(key, "skipped", reason)
            continue
        try:
            expected = grads(op, sample, None)
        except Exception as e:  # noqa: BLE001
            record(key, "skipped", f"the CPU rejects it ({type(e).__name__})")
            continue
        if expected is None:
            record(key, "skipped", "no output or input requires grad")
            continue
        try:
            with Strict():
                actual = grads(op, sample, DEVICE)
                expected = [g if g is not None else None for g in expected]
                compare(list(actual), expected, torch.float32, full_name(op))
        except Exception as e:  # noqa: BLE001
            if STRICT_MESSAGE in str(e):
                record(key, "fell_back", fallback_name(e))
                continue
            expected_failure = xfail_reason(full_name(op) + ".backward", None, BACKWARD_SAMPLES) is not None
            record(key, "xfail" if expected_failure else "failed", str(e)[:200])
            failures.append(f"sample {i}: {type(e).__name__}: {' '.join(str(e).split())[:300]}")
            continue
        record(key, "pass", "")
    assert not failures, "\n".join(failures)


class Summary:
    """A plugin registered for this file's run: pytest calls its hook after the last test, when the output
    is no longer captured, so the table lands in the terminal and in CTest's log."""

    def __init__(self):
        self.start = time.monotonic()

    def pytest_terminal_summary(self, terminalreporter):
        terminalreporter.section("OpInfo conformance")
        for line in summary_lines(time.monotonic() - self.start):
            terminalreporter.write_line(line)


@pytest.fixture(scope="module", autouse=True)
def summary(request):
    if not request.config.pluginmanager.has_plugin("ocltune-opinfo-summary"):
        request.config.pluginmanager.register(Summary(), "ocltune-opinfo-summary")
    yield


def summary_lines(seconds):
    lines = [f"on {DEVICE}, strict: the first {SAMPLES} samples per op and dtype ({SAMPLES_16BIT} for float16 and "
             f"bfloat16), {BACKWARD_SAMPLES} for backward (float32); "
             f"{seconds:.0f} s"]
    lines.append(f"{'op dtype':44s} {'pass':>5s} {'fell back':>9s} {'skipped':>7s} {'xfail':>5s} {'failed':>6s}  "
                 "fell back to / skipped for")
    totals = collections.Counter()
    for key in sorted(RESULTS):
        c = RESULTS[key]
        totals.update(c)
        notes = [f"{k} x{v}" for k, v in FELL_BACK_TO[key].items()] + [f"{k} x{v}" for k, v in SKIP_REASONS[key].items()]
        lines.append(f"{key:44s} {c['pass']:5d} {c['fell_back']:9d} {c['skipped']:7d} {c['xfail']:5d} {c['failed']:6d}  "
                     f"{'; '.join(notes)}")
    for name, reason in SKIP_OPS.items():
        lines.append(f"{name:44s} skipped (whole op): {reason}")
    lines.append(f"ops in the suite: {len(SUITE)} OpInfos; {len(RESULTS)} (op, dtype) and backward entries ran")
    lines.append(f"samples: pass {totals['pass']}, fell back {totals['fell_back']}, skipped {totals['skipped']}, "
                 f"xfail {totals['xfail']}, failed {totals['failed']}; whole ops skipped {len(SKIP_OPS)}; "
                 f"expected failures (op, dtype) {len(XFAIL)}")
    lines += [f"xfail: {k[0]} {k[1] or 'all dtypes'} (from sample {v[1]}): {v[0]}" for k, v in XFAIL.items()]
    return lines
