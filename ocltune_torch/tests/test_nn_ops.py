"""The neural-network ops (conv, pooling, norms, softmax backward, losses) against PyTorch's CPU result.

Forward results and every gradient are compared with the CPU's on the same inputs and the same
upstream gradient. The supported cases run in strict mode (OCLTUNE_TORCH_STRICT=1, read at call
time), so a CPU fallback anywhere in forward or backward fails them; the cases that fall back on
purpose check that they are counted.
"""

import contextlib

import pytest
import torch
import torch.nn.functional as F

import ocltune_torch
from conftest import DEVICE, FLOAT_DTYPES, assert_close, rand


def to_device(t, device):
    """t on `device` with the same strides (channels_last, transposed and sliced views stay so)."""
    if t.device == torch.device(device) or t.is_contiguous():
        return t.to(device)
    base = torch.empty(0, dtype=t.dtype)
    base.set_(t.untyped_storage())
    return base.to(device).as_strided(t.shape, t.stride(), t.storage_offset())


def run(f, inputs, device, grad_seed=7, needs_grad=None):
    """f(*inputs) on `device`, its output(s) and the gradients of the floating-point inputs."""
    leaves = []
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor):
            x = to_device(x.detach(), device)
            if x.is_floating_point() and (needs_grad is None or needs_grad[i]):
                x.requires_grad_()
        leaves.append(x)
    out = f(*leaves)
    outs = out if isinstance(out, tuple) else (out,)
    g = torch.Generator().manual_seed(grad_seed)
    diff = [o for o in outs if o.requires_grad]
    if diff:
        grads = [torch.randn(o.shape, generator=g).to(o.dtype).to(device) for o in diff]
        torch.autograd.backward(diff, grads)
    return [o.detach() for o in outs], [x.grad if isinstance(x, torch.Tensor) and x.requires_grad else None
                                        for x in leaves]


def check(f, *inputs, scale=1.0, grad_scale=None, needs_grad=None, fp32_reference=False, **tol):
    """Outputs and input gradients of f on ocl match the CPU's. fp32_reference: the CPU computes on
    fp32 copies of 16-bit inputs, rounded at the end (PyTorch's CPU kernels round 16-bit
    intermediates, such as layer norm's statistics, that the device keeps in fp32)."""
    if fp32_reference:
        dtypes = [x.dtype if isinstance(x, torch.Tensor) else None for x in inputs]
        wide = [x.float() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
        out_cpu, g_cpu = run(f, wide, "cpu", needs_grad=needs_grad)
        out_dtype = next(d for d in dtypes if d is not None)
        out_cpu = [o.to(out_dtype) if o.is_floating_point() else o for o in out_cpu]
        g_cpu = [g if g is None else g.to(d) for g, d in zip(g_cpu, dtypes)]
    else:
        out_cpu, g_cpu = run(f, inputs, "cpu", needs_grad=needs_grad)
    out_ocl, g_ocl = run(f, inputs, DEVICE, needs_grad=needs_grad)
    for a, b in zip(out_ocl, out_cpu):
        if b.is_floating_point():
            assert_close(a, b, scale=scale, **tol)
        else:
            assert torch.equal(a.cpu(), b), "integer outputs differ"
    for a, b in zip(g_ocl, g_cpu):
        assert (a is None) == (b is None)
        if b is not None:
            assert_close(a, b, scale=grad_scale or scale, **tol)


# ---- convolution ----

# (n, c, h, w, k, r, s, stride, padding, dilation, groups, bias): 1, primes, odd planes, channels
# that are no multiple of a tile, depthwise, grouped, dilated, strided, 1x1, rectangular.
CONV_CASES = [
    (2, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1, True),
    (1, 4, 5, 5, 6, 3, 3, 2, 0, 1, 2, True),
    (2, 4, 11, 6, 4, 3, 3, 1, 2, 2, 4, False),  # depthwise, dilated
    (3, 5, 8, 8, 7, 1, 1, 1, 0, 1, 1, False),  # 1x1
    (1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, True),
    (2, 6, 13, 7, 3, 5, 3, (2, 1), (2, 1), 1, 3, True),
    (2, 3, 17, 17, 8, 3, 3, 1, 1, 1, 1, True),  # 3x3 stride 1 (Winograd applies)
    (1, 8, 9, 9, 16, 3, 3, 2, 1, 1, 8, True),  # grouped with 2 outputs per group
]


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d(case, strict):
    n, c, h, w, k, r, s, stride, padding, dilation, groups, bias = case
    x, wt = rand(n, c, h, w), rand(k, c // groups, r, s, seed=1)
    b = rand(k, seed=2) if bias else None
    check(lambda x, wt, b: F.conv2d(x, wt, b, stride, padding, dilation, groups), x, wt, b, scale=10)


def test_conv2d_non_contiguous_inputs(strict):
    wt, b = rand(6, 4, 3, 3, seed=1), rand(6, seed=2)
    conv = lambda x, wt, b: F.conv2d(x, wt, b, padding=1)  # noqa: E731
    check(conv, rand(2, 4, 9, 7).to(memory_format=torch.channels_last), wt, b, scale=10)
    check(conv, rand(2, 4, 7, 9).transpose(2, 3), wt, b, scale=10)
    check(conv, rand(3, 6, 12, 10)[1:, 1:5, 2:11, ::1], wt, b, scale=10)
    check(conv, rand(2, 4, 9, 7), rand(4, 6, 3, 3, seed=3).transpose(0, 1), b, scale=10)  # a transposed weight


def test_conv2d_output_mask(strict):
    # Autograd asks only for the gradients it needs: each subset of input, weight and bias.
    x, wt, b = rand(2, 3, 6, 5), rand(4, 3, 3, 3, seed=1), rand(4, seed=2)
    conv = lambda x, wt, b: F.conv2d(x, wt, b, stride=2, padding=1)  # noqa: E731
    for mask in [(True, False, False), (False, True, False), (False, False, True), (False, True, True)]:
        check(conv, x, wt, b, scale=10, needs_grad=list(mask))


@pytest.mark.parametrize("stride,padding,dilation,groups", [(1, 0, 1, 1), (2, 1, 1, 1), (3, 2, 2, 3), (1, 1, 1, 6)])
def test_conv1d(stride, padding, dilation, groups, strict):
    x, wt, b = rand(2, 6, 13), rand(12, 6 // groups, 3, seed=1), rand(12, seed=2)
    check(lambda x, wt, b: F.conv1d(x, wt, b, stride, padding, dilation, groups), x, wt, b, scale=10)


@pytest.mark.parametrize(
    "stride,padding,output_padding,dilation,groups",
    [(1, 0, 0, 1, 1), (2, 1, 1, 1, 1), (3, 1, 2, 1, 2), (2, 0, 0, 2, 1), ((2, 1), (1, 0), (1, 0), 1, 1)],
)
def test_conv_transpose2d(stride, padding, output_padding, dilation, groups, strict):
    x, wt, b = rand(2, 4, 5, 6), rand(4, 3, 3, 2, seed=1), rand(3 * groups, seed=2)
    check(lambda x, wt, b: F.conv_transpose2d(x, wt, b, stride, padding, output_padding, groups, dilation), x, wt, b,
          scale=10)


def test_conv_transpose1d(strict):
    x, wt, b = rand(3, 4, 7), rand(4, 5, 3, seed=1), rand(5, seed=2)
    check(lambda x, wt, b: F.conv_transpose1d(x, wt, b, stride=2, padding=1, output_padding=1), x, wt, b, scale=10)


def test_conv2d_empty_batch(strict):
    x, wt = torch.zeros(0, 3, 5, 5), rand(4, 3, 3, 3, seed=1)
    y = F.conv2d(x.to(DEVICE), wt.to(DEVICE))
    assert y.shape == (0, 4, 3, 3) and y.device == DEVICE


def test_conv2d_module_training_step(strict):
    torch.manual_seed(0)
    cpu = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.Conv2d(8, 8, 3, groups=8, stride=2),
                              torch.nn.Conv2d(8, 5, 1))
    ocl = torch.nn.Sequential(*[torch.nn.Conv2d(m.in_channels, m.out_channels, m.kernel_size, m.stride, m.padding,
                                                groups=m.groups) for m in cpu])
    ocl.load_state_dict(cpu.state_dict())
    ocl.to(DEVICE)
    x = rand(2, 3, 11, 9)
    y_cpu, y_ocl = cpu(x), ocl(x.to(DEVICE))
    assert_close(y_ocl.detach(), y_cpu.detach(), scale=10)
    (y_cpu * y_cpu).mean().backward()
    (y_ocl * y_ocl).mean().backward()
    for p_ocl, p_cpu in zip(ocl.parameters(), cpu.parameters()):
        assert_close(p_ocl.grad, p_cpu.grad, scale=20)


def test_conv_fallbacks_are_counted(monkeypatch):
    # 3-D convolutions run on CPU copies, counted; strict mode refuses them.
    ocltune_torch.reset_fallback_stats()
    x3, w3 = rand(1, 2, 4, 5, 3), rand(3, 2, 2, 2, 2, seed=1)
    assert_close(F.conv3d(x3.to(DEVICE), w3.to(DEVICE)), F.conv3d(x3, w3), scale=10)
    assert ocltune_torch.fallback_stats()["aten::convolution_overrideable"] == 1
    monkeypatch.setenv("OCLTUNE_TORCH_STRICT", "1")
    with pytest.raises(RuntimeError, match="convolution_overrideable.*OCLTUNE_TORCH_STRICT"):
        F.conv3d(x3.to(DEVICE), w3.to(DEVICE))


# ---- 16-bit convolutions: the family's fp16 / bf16 storage, no fp32 copies on the way ----

HALF_TYPES = [torch.float16, torch.bfloat16]
# (input, weight, stride, padding, dilation, groups, bias): groups, stride with dilation and uneven
# padding, depthwise, 1x1 (the GEMM algorithm), 3x3 stride 1 (Winograd), odd sizes throughout.
CONV16_CASES = [
    ((2, 4, 7, 6), (6, 2, 3, 3), 1, 1, 1, 2, True),
    ((1, 3, 11, 9), (5, 3, 3, 2), 2, (1, 0), (1, 2), 1, False),
    ((2, 6, 9, 9), (6, 1, 3, 3), 1, 1, 1, 6, True),
    ((3, 5, 5, 7), (7, 5, 1, 1), 1, 0, 1, 1, True),
    ((2, 3, 13, 11), (4, 3, 3, 3), 1, 1, 1, 1, False),
]


def conv_of(stride, padding, dilation, groups):
    return lambda x, wt, b: F.conv2d(x, wt, b, stride, padding, dilation, groups)


def within_float64(conv, x, wt, b, dtype):
    """Output and input gradients of the 16-bit conv on ocl against float64 on the same (16-bit) values:
    |ocl - exact| <= (2 u + 1e-5) * scale + 1e-6 per element, u the dtype's unit roundoff (two roundings:
    the GEMM-based algorithms round their GEMM's result and the final one) and scale the same op on
    the absolute values (the sum of |terms| of each element, as the family's own verification)."""
    u = 2.0 ** -11 if dtype == torch.float16 else 2.0 ** -8
    g = torch.randn(conv(x.float(), wt.float(), None if b is None else b.float()).shape,
                    generator=torch.Generator().manual_seed(7)).to(dtype)

    def grads(device, cast, x, wt, b, g):
        leaves = [None if t is None else cast(t).to(device).requires_grad_() for t in (x, wt, b)]
        y = conv(*leaves)
        y.backward(cast(g).to(device))
        return [y.detach()] + [None if t is None else t.grad for t in leaves]

    ocl = grads(DEVICE, lambda t: t, x, wt, b, g)
    exact = grads("cpu", torch.Tensor.double, x, wt, b, g)
    scale = grads("cpu", lambda t: t.double().abs(), x, wt, b, g)
    for name, a, e, s in zip(["output", "input gradient", "weight gradient", "bias gradient"], ocl, exact, scale):
        if e is None:
            continue
        assert a.dtype == dtype, f"{name}: {a.dtype}"
        error = (a.cpu().double() - e).abs()
        bound = (2 * u + 1e-5) * s + 1e-6
        assert bool((error <= bound).all()), f"{name}: error {float((error / bound).max()):.2f} x the bound"


@pytest.mark.parametrize("dtype", HALF_TYPES, ids=str)
@pytest.mark.parametrize("case", CONV16_CASES, ids=lambda c: "x".join(map(str, c[0])) + f"_g{c[5]}")
def test_conv2d_16bit(case, dtype, strict):
    x_shape, w_shape, stride, padding, dilation, groups, has_bias = case
    x, wt = rand(*x_shape, dtype=dtype), rand(*w_shape, dtype=dtype, seed=1)
    b = rand(w_shape[0], dtype=dtype, seed=2) if has_bias else None
    conv = conv_of(stride, padding, dilation, groups)
    # PyTorch's CPU result on fp32 copies, rounded once: its 16-bit op rounds intermediates (the
    # input gradient's columns) that ocl keeps in fp32, and near a cancellation that rounding alone
    # exceeds any tolerance relative to the result. within_float64 bounds the error by the terms.
    check(conv, x, wt, b, scale=4, fp32_reference=True)
    within_float64(conv, x, wt, b, dtype)


@pytest.mark.parametrize("dtype", HALF_TYPES, ids=str)
def test_conv_16bit_non_contiguous_and_transposed(dtype, strict):
    wt, b = rand(6, 4, 3, 3, dtype=dtype, seed=1), rand(6, dtype=dtype, seed=2)
    conv = conv_of(1, 1, 1, 1)
    for x in [rand(2, 4, 9, 7, dtype=dtype).to(memory_format=torch.channels_last),
              rand(2, 4, 7, 9, dtype=dtype).transpose(2, 3), rand(3, 6, 12, 10, dtype=dtype)[1:, 1:5, 2:11]]:
        check(conv, x, wt, b, scale=4, fp32_reference=True)  # as test_conv2d_16bit
        within_float64(conv, x, wt, b, dtype)
    check(lambda x, wt, b: F.conv_transpose1d(x, wt, b, stride=2), rand(2, 6, 5, dtype=dtype),
          rand(6, 3, 3, dtype=dtype, seed=1), rand(3, dtype=dtype, seed=2), scale=4)


@pytest.mark.parametrize("dtype", HALF_TYPES, ids=str)
def test_conv2d_16bit_makes_no_fp32_copies(dtype, strict):
    # The convolution and its gradients read and write the 16-bit tensors themselves: no cast
    # (aten::_to_copy) around them, and every runtime call is a conv2d problem of that dtype.
    x = rand(2, 4, 9, 8, dtype=dtype).to(DEVICE).requires_grad_()
    wt = rand(6, 4, 3, 3, dtype=dtype, seed=1).to(DEVICE).requires_grad_()
    b = rand(6, dtype=dtype, seed=2).to(DEVICE).requires_grad_()
    g = rand(2, 6, 9, 8, dtype=dtype, seed=3).to(DEVICE)
    F.conv2d(x, wt, b, padding=1).backward(g)  # builds the programs
    x.grad = wt.grad = b.grad = None  # no accumulation (an add) into the gradients below
    torch.ocl.synchronize()
    ocltune_torch.reset_dispatch_stats()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        F.conv2d(x, wt, b, padding=1).backward(g)
        torch.ocl.synchronize()
    ops = {e.name for e in prof.events()}
    assert "aten::_to_copy" not in ops and "aten::copy_" not in ops, sorted(ops)
    stats = ocltune_torch.dispatch_stats()
    assert set(stats["families"]) == {"conv2d"}, stats["families"]
    problems = [p for d in stats["devices"].values() for p in d["problems"]]
    name = {torch.float16: "fp16", torch.bfloat16: "bf16"}[dtype]
    assert problems and all(p["dtype"] == name for p in problems), problems


def test_conv2d_mixed_dtypes_raise_as_on_cpu():
    # PyTorch refuses an input, weight or bias of another dtype on the CPU; so does ocl.
    for x_type, w_type, b_type in [(torch.float16, torch.float32, None), (torch.float32, torch.bfloat16, None),
                                   (torch.bfloat16, torch.float16, None), (torch.float16, torch.float16, torch.float32)]:
        x, wt = rand(1, 2, 5, 5, dtype=x_type), rand(3, 2, 3, 3, dtype=w_type, seed=1)
        b = None if b_type is None else rand(3, dtype=b_type, seed=2)
        with pytest.raises(RuntimeError):
            F.conv2d(x, wt, b)
        with pytest.raises(RuntimeError):
            F.conv2d(x.to(DEVICE), wt.to(DEVICE), None if b is None else b.to(DEVICE))


def test_conv2d_follows_cudnns_tf32_switch(strict):
    # ocl's convolutions take TF32 permission from cuDNN's switch, as cuda's do, in both of its APIs
    # (set apart for conv and rnn too, where reading it without the op name raises); the float32
    # matmul precision governs the GEMMs only. With TF32 allowed the family's TF32 algorithms may run
    # where the device has them; elsewhere the result is exact.
    allowed = torch.ops.ocltune.conv_tf32_allowed
    cudnn = torch.backends.cudnn
    x, wt = rand(2, 8, 9, 9), rand(8, 8, 3, 3, seed=1)
    new_api = hasattr(cudnn, "conv")
    # What the conftest set (the legacy getter raises once conv and rnn differ, so new API first).
    saved = cudnn.conv.fp32_precision if new_api else cudnn.allow_tf32
    saved_matmul = torch.get_float32_matmul_precision()
    # torch's test utilities (test_opinfo.py imports them) freeze cuDNN's flags on import, and their
    # flags() context cannot set conv's precision apart from rnn's: allow setting them directly, as
    # flags() itself does, where a file before this one in the process froze them.
    unfrozen = getattr(torch.backends, "__allow_nonbracketed_mutation", contextlib.nullcontext)
    with unfrozen():
        try:
            cudnn.allow_tf32 = True
            assert allowed()
            y = F.conv2d(x.to(DEVICE), wt.to(DEVICE), padding=1)
            assert_close(y, F.conv2d(x, wt, padding=1), rtol=1e-2, atol=1e-2)
            cudnn.allow_tf32 = False
            assert not allowed()
            torch.set_float32_matmul_precision("high")
            assert not allowed(), "the matmul precision does not govern convolutions"
            if new_api:
                cudnn.conv.fp32_precision = "tf32"  # the rnn switch stays off
                assert allowed()
                cudnn.conv.fp32_precision = "ieee"
                assert not allowed()
            y = F.conv2d(x.to(DEVICE), wt.to(DEVICE), padding=1)
            assert_close(y, F.conv2d(x, wt, padding=1))
        finally:
            torch.set_float32_matmul_precision(saved_matmul)
            if new_api:
                cudnn.allow_tf32 = True  # rnn back to its default
                cudnn.conv.fp32_precision = saved
            else:
                cudnn.allow_tf32 = saved


# ---- pooling ----

# (h, w, kernel, stride, padding, ceil_mode): odd planes, overlapping windows, padding, ceil mode.
POOL_CASES = [
    (7, 9, 3, 2, 1, False),
    (8, 8, 2, 2, 0, False),
    (5, 11, (3, 2), (1, 2), (1, 0), True),
    (1, 1, 1, 1, 0, False),
    (13, 6, 5, 3, 2, True),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("case", POOL_CASES)
def test_max_pool2d(case, dtype, strict):
    h, w, k, s, p, ceil = case
    x = torch.randperm(2 * 3 * h * w, generator=torch.Generator().manual_seed(0)).view(2, 3, h, w).to(dtype)  # no ties
    check(lambda x: F.max_pool2d(x, k, s, p, ceil_mode=ceil, return_indices=True), x)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("case", POOL_CASES)
def test_avg_pool2d(case, count_include_pad, dtype, strict):
    h, w, k, s, p, ceil = case
    check(lambda x: F.avg_pool2d(x, k, s, p, ceil_mode=ceil, count_include_pad=count_include_pad),
          rand(2, 3, h, w, dtype=dtype))


def test_pool2d_layouts(strict):
    x = rand(2, 5, 9, 7)
    for t in [x.to(memory_format=torch.channels_last), x.transpose(2, 3), x[:, 1:4, ::2], x[0]]:  # and 3-D [C, H, W]
        check(lambda x: F.max_pool2d(x, 3, 2, 1), t)
        check(lambda x: F.avg_pool2d(x, 2), t)
        check(lambda x: F.adaptive_avg_pool2d(x, 1), t)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape,out", [((2, 3, 7, 5), 1), ((2, 3, 8, 6), (4, 3)), ((1, 4, 9, 9), 3),
                                       ((3, 2, 6, 6), 6), ((2, 3, 1, 1), (1, 1))])
def test_adaptive_avg_pool2d(shape, out, dtype, strict):
    check(lambda x: F.adaptive_avg_pool2d(x, out), rand(*shape, dtype=dtype))


# The windows the pool family has no kind for run on plain kernels (plain/kernels/plain_pool.cl): dilation,
# divisor_override, adaptive windows of different sizes, adaptive max. (h, w, kernel, stride, padding,
# dilation, ceil_mode): odd planes, dilated windows overlapping, padding reaching past the first rows,
# ceil mode's last window hanging over the edge.
DILATED_CASES = [
    (7, 7, 2, 1, 0, 2, False),
    (9, 11, 3, 2, 1, (2, 3), False),
    (10, 7, (3, 2), (2, 1), (1, 1), (3, 2), True),
    (5, 5, 1, 2, 0, 4, True),
    (6, 13, 5, 3, 2, 2, True),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("case", DILATED_CASES)
def test_max_pool2d_dilation(case, dtype, strict):
    h, w, k, s, p, d, ceil = case
    x = torch.randperm(2 * 3 * h * w, generator=torch.Generator().manual_seed(1)).view(2, 3, h, w).to(dtype)  # no ties
    check(lambda x: F.max_pool2d(x, k, s, p, dilation=d, ceil_mode=ceil, return_indices=True), x)


def test_max_pool2d_dilation_ties_nan_and_layouts(strict):
    # Ties keep the first maximum's index, NaN wins, as the CPU's; windows over 64 take the same kernel.
    x = torch.tensor([[[[1.0, 3.0, 3.0, 0.0, 3.0], [float("nan"), 2.0, 3.0, 3.0, 1.0], [0.0, 0.0, 3.0, 1.0, 1.0],
                       [1.0, 1.0, 0.0, 2.0, 2.0]]]])
    check(lambda x: F.max_pool2d(x, 2, 1, dilation=2, return_indices=True), x, equal_nan=True)
    t = rand(2, 5, 9, 12)
    for v in [t.to(memory_format=torch.channels_last), t.transpose(2, 3), t[:, 1:4, ::2], t[0]]:
        check(lambda x: F.max_pool2d(x, 3, 2, 1, dilation=2, return_indices=True), v)
    check(lambda x: F.max_pool2d(x, (66, 2), 1, return_indices=True), rand(1, 2, 70, 3))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("case,divisor", [(POOL_CASES[0], 5), (POOL_CASES[2], 1), (POOL_CASES[4], 31),
                                          ((4, 4, 2, 2, 0, False), 3), (POOL_CASES[1], -2)])
def test_avg_pool2d_divisor_override(case, divisor, count_include_pad, dtype, strict):
    h, w, k, s, p, ceil = case
    check(lambda x: F.avg_pool2d(x, k, s, p, ceil_mode=ceil, count_include_pad=count_include_pad,
                                 divisor_override=divisor), rand(2, 3, h, w, dtype=dtype))
    check(lambda x: F.avg_pool2d(x, k, s, p, ceil_mode=ceil, divisor_override=divisor),
          rand(2, 3, h, w, dtype=dtype).transpose(2, 3)[:, ::2])  # non-contiguous


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape,out", [((2, 3, 7, 5), (3, 2)), ((1, 4, 10, 9), (4, 7)), ((2, 2, 5, 5), (5, 3)),
                                       ((1, 3, 3, 4), (5, 7)), ((2, 1, 13, 2), (6, 1)), ((1, 2, 130, 3), (2, 3))])
def test_adaptive_avg_pool2d_uneven_windows(shape, out, dtype, strict):
    # Output sizes that do not divide the input (windows of two sizes, overlapping), larger than the
    # input (windows repeated), and uniform windows over 64.
    check(lambda x: F.adaptive_avg_pool2d(x, out), rand(*shape, dtype=dtype))
    check(lambda x: F.adaptive_avg_pool2d(x, out), rand(*shape, dtype=dtype).transpose(2, 3).contiguous()
          .transpose(2, 3))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape,out", [((2, 3, 7, 5), (3, 2)), ((1, 4, 8, 8), (4, 4)), ((2, 2, 5, 5), 1),
                                       ((1, 3, 3, 4), (5, 7)), ((3, 6, 9), (4, 4))])
def test_adaptive_max_pool2d(shape, out, dtype, strict):
    n = torch.Size(shape).numel()
    x = torch.randperm(n, generator=torch.Generator().manual_seed(2)).view(shape).to(dtype)  # no ties
    check(lambda x: F.adaptive_max_pool2d(x, out, return_indices=True), x)
    check(lambda x: F.adaptive_max_pool2d(x, out, return_indices=True), x.transpose(-1, -2))


def test_adaptive_max_pool2d_ties_and_nan(strict):
    x = torch.tensor([[[[2.0, 2.0, 1.0], [2.0, float("nan"), 0.0], [1.0, 1.0, 1.0], [0.0, 5.0, 5.0]]]])
    check(lambda x: F.adaptive_max_pool2d(x, (3, 2), return_indices=True), x, equal_nan=True)


# ---- batch norm and layer norm ----


def batch_norm_both(x, affine, track, training, dtype=torch.float32, memory_format=None, momentum=0.1):
    """F.batch_norm (what nn.BatchNorm calls) in train or eval mode on CPU and ocl: outputs,
    gradients of x, weight and bias, running statistics after the call. (Not the module itself: its
    num_batches_tracked counter is an int64 op of another part of the backend.)"""
    c = x.shape[1]
    weight, bias = (rand(c, seed=3) + 2, rand(c, seed=4)) if affine else (None, None)
    stats = (rand(c, seed=5), rand(c, seed=6).abs() + 0.5) if track else (None, None)
    results = []
    for device in ["cpu", DEVICE]:
        def leaf(t):
            return None if t is None else t.detach().clone().to(device=device, dtype=dtype).requires_grad_()
        w, b = leaf(weight), leaf(bias)
        rm, rv = [None if t is None else t.clone().to(device=device, dtype=dtype) for t in stats]
        xd = x.to(dtype)
        if memory_format is not None:
            xd = xd.to(memory_format=memory_format)
        xd = to_device(xd.detach(), device).requires_grad_()
        y = F.batch_norm(xd, rm, rv, w, b, training=training, momentum=momentum)
        y.backward(rand(*y.shape, seed=9).to(dtype).to(device))
        results.append((y.detach(), xd.grad, [w.grad, b.grad] if affine else [], [rm, rv] if track else []))
    return results


@pytest.mark.parametrize("shape", [(4, 3), (3, 5, 7), (2, 3, 5, 7), (1, 13, 2, 1), (5, 1, 3, 3)])
@pytest.mark.parametrize("affine,track", [(True, True), (False, True), (True, False), (False, False)])
def test_batch_norm_training(shape, affine, track, strict):
    (y0, g0, p0, s0), (y1, g1, p1, s1) = batch_norm_both(rand(*shape), affine, track, training=True)
    assert_close(y1, y0, scale=10)
    assert_close(g1, g0, scale=10)
    for a, b in zip(p1 + s1, p0 + s0):
        assert_close(a, b, scale=10)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5, 7), (2, 3, 5, 7)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_eval(shape, affine, strict):
    (y0, g0, p0, s0), (y1, g1, p1, s1) = batch_norm_both(rand(*shape), affine, True, training=False)
    assert_close(y1, y0, scale=10)
    assert_close(g1, g0, scale=10)
    for a, b in zip(p1 + s1, p0 + s0):
        assert_close(a, b, scale=10)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_batch_norm_eval_is_one_launch(dtype, strict):
    # The eval forward was eight elementwise launches; one kernel now (and no runtime dispatch).
    x = rand(2, 5, 3, 3, dtype=dtype).to(DEVICE)
    rm, rv = rand(5, seed=1).to(DEVICE), (rand(5, seed=2).abs() + 0.5).to(DEVICE)
    w, b = rand(5, seed=3).to(DEVICE), rand(5, seed=4).to(DEVICE)
    F.batch_norm(x, rm, rv, w, b, training=False)  # builds the program
    torch.ocl.synchronize()
    ocltune_torch.reset_dispatch_stats()
    y = F.batch_norm(x, rm, rv, w, b, training=False)
    stats = ocltune_torch.dispatch_stats()
    assert stats["plain_launches"] == 1 and stats["calls"] == 0, stats
    expected = F.batch_norm(x.cpu().float(), rm.cpu(), rv.cpu(), w.cpu(), b.cpu(), training=False).to(dtype)
    assert_close(y, expected, scale=2)


def test_batch_norm_channels_last_and_momentum(strict):
    x = rand(2, 6, 5, 3)
    for momentum in [0.1, 1.0, 0.0]:
        (y0, g0, p0, s0), (y1, g1, p1, s1) = batch_norm_both(x, True, True, training=True,
                                                             memory_format=torch.channels_last, momentum=momentum)
        assert_close(y1, y0, scale=10)
        assert_close(g1, g0, scale=10)
        for a, b in zip(p1 + s1, p0 + s0):
            assert_close(a, b, scale=10)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_batch_norm_16bit(dtype, strict):
    # Training with 16-bit data, weights and fp32 running statistics (the family's), and eval with a
    # module converted to 16 bits (running statistics too).
    x, w, b = rand(3, 4, 5, 5, dtype=dtype), (rand(4, seed=1) + 2).to(dtype), rand(4, seed=2).to(dtype)
    rm, rv = rand(4, seed=3), rand(4, seed=4).abs() + 0.5
    rm0, rv0, rm1, rv1 = rm.clone(), rv.clone(), rm.to(DEVICE), rv.to(DEVICE)
    y0 = F.batch_norm(x.float(), rm0, rv0, w.float(), b.float(), training=True).to(dtype)  # the CPU has no such mix
    y1 = F.batch_norm(x.to(DEVICE), rm1, rv1, w.to(DEVICE), b.to(DEVICE), training=True)
    assert_close(y1, y0, scale=2)
    assert_close(rm1, rm0, scale=10)
    assert_close(rv1, rv0, scale=10)
    (y0, g0, p0, s0), (y1, g1, p1, s1) = batch_norm_both(rand(3, 4, 5, 5), True, True, training=False, dtype=dtype)
    assert_close(y1, y0, scale=2)
    assert_close(g1, g0, scale=2)
    for a, b in zip(p1, p0):
        assert_close(a, b, scale=4)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_batch_norm_16bit_running_statistics_in_training(dtype, strict):
    # A module converted with .half() or .bfloat16(): 16-bit running statistics, updated on the device
    # in fp32 and rounded once (as CUDA's kernels do); the reference is that computation on the CPU.
    x, w, b = rand(3, 4, 5, 5, dtype=dtype), (rand(4, seed=1) + 2).to(dtype), rand(4, seed=2).to(dtype)
    rm, rv = rand(4, seed=3).to(dtype), (rand(4, seed=4).abs() + 0.5).to(dtype)
    rm0, rv0 = rm.float(), rv.float()
    y0 = F.batch_norm(x.float(), rm0, rv0, w.float(), b.float(), training=True, momentum=0.3).to(dtype)
    rm1, rv1 = rm.to(DEVICE), rv.to(DEVICE)
    y1 = F.batch_norm(x.to(DEVICE), rm1, rv1, w.to(DEVICE), b.to(DEVICE), training=True, momentum=0.3)
    assert_close(y1, y0, scale=2)
    assert rm1.dtype == rv1.dtype == dtype
    assert_close(rm1, rm0.to(dtype), scale=2)
    assert_close(rv1, rv0.to(dtype), scale=2)
    assert not torch.equal(rm1.cpu(), rm), "the running mean was not updated"
    # The whole module, forward and backward, in strict mode.
    bn = torch.nn.BatchNorm2d(4).to(dtype)
    bn_d = torch.nn.BatchNorm2d(4).to(dtype).to(DEVICE)
    xd = x.to(DEVICE).requires_grad_()
    bn_d(xd).sum().backward()
    assert xd.grad.dtype == dtype and bn_d.weight.grad.dtype == dtype
    assert bn_d.num_batches_tracked.item() == 1 and bn.running_mean.dtype == bn_d.running_mean.dtype


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_16bit_data_with_fp32_parameters(dtype, training, strict):
    # Autocast's mix: 16-bit activations, fp32 weights, bias and running statistics (cuDNN takes it;
    # the CPU does not, so its reference is the fp32 computation rounded). The weights' gradients come
    # back in fp32, as autograd requires. In eval the output is computed in fp32 and rounded once:
    # x near the running mean cancels (scale and shift rounded to 16 bits were 17% off on the H200).
    rm, rv = rand(4, seed=3), rand(4, seed=4).abs() + 0.5
    x = (rm.view(1, 4, 1, 1) + 0.01 * rand(3, 4, 5, 5)).to(dtype)
    w, b = rand(4, seed=1) + 2, rand(4, seed=2) * 50
    dy = rand(3, 4, 5, 5, seed=9).to(dtype)
    results = []
    for device in ["cpu", DEVICE]:
        xd = (x.float() if device == "cpu" else x.to(DEVICE)).requires_grad_()
        wd, bd = w.clone().to(device).requires_grad_(), b.clone().to(device).requires_grad_()
        rmd, rvd = rm.clone().to(device), rv.clone().to(device)
        y = F.batch_norm(xd, rmd, rvd, wd, bd, training=training)
        y.backward(dy.to(device, y.dtype))
        results.append((y.to(dtype), xd.grad.to(dtype), wd.grad, bd.grad, rmd, rvd))
    (y0, dx0, dw0, db0, rm0, rv0), (y1, dx1, dw1, db1, rm1, rv1) = results
    assert y1.dtype == dtype and dw1.dtype == db1.dtype == torch.float32
    assert_close(y1, y0, scale=2)
    assert_close(dx1, dx0, scale=4)
    # dw and db are sums over 75 values, rounded to 16 bits where the family computes them
    tol = dict(rtol=1e-2, atol=1e-2) if dtype == torch.bfloat16 else dict(rtol=2e-3, atol=2e-3)
    assert_close(dw1, dw0, **tol)
    assert_close(db1, db0, **tol)
    assert_close(rm1, rm0, scale=10)
    assert_close(rv1, rv0, scale=10)


def test_batch_norm_16bit_training_with_16bit_statistics_matches_the_cpu(strict):
    # The CPU's own float16 batch norm (it has one) against the device's: output, gradients and the
    # running statistics written back in 16 bits.
    (y0, g0, p0, s0), (y1, g1, p1, s1) = batch_norm_both(rand(3, 4, 5, 5), True, True, training=True,
                                                         dtype=torch.float16)
    assert_close(y1, y0, scale=2)
    assert_close(g1, g0, scale=4)
    for a, b in zip(s1, s0):
        assert_close(a, b, scale=2)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape,normalized", [((5, 7), (7,)), ((2, 3, 11), (3, 11)), ((1, 1), (1,)),
                                              ((4, 2, 3, 67), (67,)), ((3, 130), (130,))])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(shape, normalized, affine, dtype, strict):
    w = (rand(*normalized, seed=1) + 1).to(dtype) if affine else None
    b = rand(*normalized, seed=2).to(dtype) if affine else None
    check(lambda x, w, b: F.layer_norm(x, normalized, w, b), rand(*shape, dtype=dtype), w, b,
          scale=4 if dtype == torch.float32 else 2, fp32_reference=dtype != torch.float32)


def test_layer_norm_non_contiguous(strict):
    w, b = rand(6, seed=1), rand(6, seed=2)
    check(lambda x, w, b: F.layer_norm(x, (6,), w, b, eps=1e-3), rand(6, 5).t(), w, b, scale=4)
    check(lambda x, w, b: F.layer_norm(x, (6,), w, b), rand(4, 9)[:, 2:8], w, b, scale=4)


def test_layer_norm_module_and_mean_rstd(strict):
    x = rand(3, 4, 10)
    y0, m0, r0 = torch.native_layer_norm(x, (10,), None, None, 1e-5)
    y1, m1, r1 = torch.native_layer_norm(x.to(DEVICE), (10,), None, None, 1e-5)
    assert_close(y1, y0)
    assert m1.shape == m0.shape == (3, 4, 1) and r1.shape == r0.shape
    assert_close(m1, m0)
    assert_close(r1, r0, scale=4)


# ---- softmax and log_softmax backward ----


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape,dim", [((5, 7), 1), ((3, 4, 5), 0), ((2, 3, 4, 5), 2), ((1,), 0), ((6, 1), 1),
                                       ((2, 3, 2, 3, 4), -1)])
def test_softmax_backward(shape, dim, dtype, strict):
    x = rand(*shape, dtype=dtype)
    check(lambda x: torch.softmax(x, dim), x)
    check(lambda x: torch.log_softmax(x, dim), x)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_softmax_backward_16bit_computes_in_fp32(dtype, strict):
    # Gradients of magnitude 9 (OpInfo's samples, issue 18): dy - sum(dy * y) cancels, and 16-bit
    # steps lost it; the CPU computes in float32 and rounds dx only.
    g = torch.Generator().manual_seed(2)  # values for which 16-bit steps fail in both dtypes
    y = torch.softmax(torch.rand(5, 10, 5, generator=g) * 18 - 9, 1).to(dtype)
    dy = (torch.rand(5, 10, 5, generator=g) * 18 - 9).to(dtype)
    for f, out in ((torch._softmax_backward_data, y), (torch._log_softmax_backward_data, y.float().log().to(dtype))):
        assert_close(f(dy.to(DEVICE), out.to(DEVICE), 1, dtype), f(dy, out, 1, dtype))


def test_softmax_backward_non_contiguous(strict):
    x = rand(7, 5)
    check(lambda x: torch.softmax(x, 1), x.t())
    check(lambda x: torch.log_softmax(x, 0), x[1:6, ::2])


# ---- losses ----


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss(reduction, dtype, strict):
    a, b = rand(4, 7, dtype=dtype), rand(4, 7, dtype=dtype, seed=1)
    check(lambda a, b: F.mse_loss(a, b, reduction=reduction), a, b, scale=4)
    check(lambda a, b: F.mse_loss(a, b, reduction=reduction), a.t(), b.t(), scale=4)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("beta", [1.0, 1.0 / 9, 0.0])
def test_smooth_l1_loss(beta, reduction, dtype, strict):
    # Differences on both sides of beta (and exactly 0: beta = 0 takes the CPU's -grad there), transposed.
    a, b = rand(4, 7, dtype=dtype), rand(4, 7, dtype=dtype, seed=1)
    b[0, :3] = a[0, :3]
    check(lambda a, b: F.smooth_l1_loss(a, b, reduction=reduction, beta=beta), a, b, scale=4)
    check(lambda a, b: F.smooth_l1_loss(a, b, reduction=reduction, beta=beta), a.t(), b.t(), scale=4)


def test_smooth_l1_loss_refuses_a_negative_beta():
    with pytest.raises(RuntimeError, match="negative values for beta"):
        F.smooth_l1_loss(rand(3).to(DEVICE), rand(3, seed=1).to(DEVICE), beta=-1.0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_with_logits(reduction, dtype, strict):
    logits = rand(5, 3, dtype=dtype) * 4
    target = torch.rand(5, 3, generator=torch.Generator().manual_seed(1)).to(dtype)
    check(lambda x, t: F.binary_cross_entropy_with_logits(x, t, reduction=reduction), logits, target, scale=4)
    w = torch.rand(3, generator=torch.Generator().manual_seed(2)).to(dtype)
    check(lambda x, t, w: F.binary_cross_entropy_with_logits(x, t, weight=w, reduction=reduction), logits, target, w,
          scale=4, needs_grad=[True, True, False])


def test_logsigmoid_extremes(strict):
    x = torch.tensor([-100.0, -20.0, -1.0, 0.0, 1e-3, 3.0, 30.0, 100.0])
    check(F.logsigmoid, x)


def class_targets(n, c, seed=3, ignore=None):
    t = torch.randint(0, c, (n,), generator=torch.Generator().manual_seed(seed))
    if ignore is not None:
        t[::3] = ignore
    return t


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n,c", [(1, 1), (7, 5), (13, 130)])
def test_cross_entropy(n, c, weighted, reduction, dtype, strict):
    logits, target = rand(n, c, dtype=dtype), class_targets(n, c)
    w = (torch.rand(c, generator=torch.Generator().manual_seed(4)) + 0.5).to(dtype) if weighted else None
    check(lambda x, t, w: F.cross_entropy(x, t, weight=w, reduction=reduction), logits, target, w,
          needs_grad=[True, False, False], scale=4, fp32_reference=dtype != torch.float32)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_nll_loss_ignore_index(reduction, ignore_index, strict):
    logp, target = torch.log_softmax(rand(9, 4), 1), class_targets(9, 4, ignore=ignore_index)
    w = torch.rand(4, generator=torch.Generator().manual_seed(4)) + 0.5
    for weight in [None, w]:
        check(lambda x, t, w: F.nll_loss(x, t, weight=w, ignore_index=ignore_index, reduction=reduction), logp, target,
              weight, needs_grad=[True, False, False])


def test_nll_loss_unbatched_and_2d(strict):
    check(lambda x, t: F.nll_loss(x, t), torch.log_softmax(rand(6), 0), torch.tensor(4))
    # Per-pixel classes (nll_loss2d), also on a channels_last input and with ignored pixels.
    x = rand(2, 5, 3, 4)
    t = torch.randint(0, 5, (2, 3, 4), generator=torch.Generator().manual_seed(5))
    t[0, 1] = -100
    for reduction in ["mean", "sum", "none"]:
        check(lambda x, t: F.cross_entropy(x, t, reduction=reduction), x, t, scale=4)
    check(lambda x, t: F.cross_entropy(x, t), x.to(memory_format=torch.channels_last), t, scale=4)


def test_nll_loss_target_out_of_range():
    with pytest.raises((RuntimeError, IndexError)):
        F.nll_loss(rand(3, 4).to(DEVICE), torch.tensor([0, 4, 1]).to(DEVICE)).cpu()
