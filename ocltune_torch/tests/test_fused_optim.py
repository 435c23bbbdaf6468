"""Adam, AdamW and SGD with fused=True on ocl (torch._fused_adam_, _fused_adamw_, _fused_sgd_ on
plain/kernels/plain_optim.cl), in strict mode: several steps against the same optimiser with fused=True on the
CPU, the parameters, gradients and every state tensor compared after each step, and against ocl's own
foreach step. The kernels repeat the CPU kernels' arithmetic, so the comparison with CPU allows a few
units in the last place (the CPU's scalar tail loop rounds differently from its vector loop), tight
enough that a wrong coefficient fails (test_comparison_catches_a_wrong_coefficient)."""

import pytest
import torch

import ocltune_torch
from conftest import DEVICE, TOLERANCES, rand


# Several tensors of different sizes: odd ones (a tail after the CPU's vector loop), a 0-dim one, an
# empty one, and one above the kernels' capped grid so work items loop.
SHAPES = [(7, 13), (1031,), (), (0,), (3, 5, 4), (70001,)]
DTYPES = [torch.float32, torch.float16, torch.bfloat16]
MANTISSA = {torch.float32: 23, torch.float16: 10, torch.bfloat16: 7}
# On PoCL the 16-bit results equal the CPU's to the bit and float32 ones differ in the elements of the
# CPU's scalar tail loop only (the last numel % 16 on AVX-512), by 1 or 2 units; the margin is for
# devices whose sqrt and division are not correctly rounded.
ULPS = {torch.float32: 4, torch.float16: 1, torch.bfloat16: 1}
STEPS = 4


def assert_ulps(actual, expected, what, ulps=None):
    """actual (ocl) equals expected (CPU) to `ulps` (default ULPS) units in the last place of its dtype,
    relative to each value or to the tensor's largest magnitude (a value that cancels to near 0 keeps its
    operands' error)."""
    assert actual.device.type == "ocl", f"{what}: expected an ocl tensor, got {actual.device}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    if expected.numel() == 0:
        return
    a, e = actual.detach().cpu().float(), expected.detach().float()
    rtol = (ULPS[expected.dtype] if ulps is None else ulps) * 2.0 ** -MANTISSA[expected.dtype]
    atol = rtol * e.abs().max().item() + 1e-30
    torch.testing.assert_close(a, e, rtol=rtol, atol=atol, msg=lambda m: f"{what}: {m}")


def make_params(dtype, shapes=SHAPES, seed=0):
    return [torch.nn.Parameter(rand(*s, dtype=dtype, seed=seed + i)) for i, s in enumerate(shapes)]


def grads_of(params, step, scale=1.0):
    """The step's gradients (CPU), scaled as an AMP grad scaler leaves them."""
    return [(rand(*p.shape, seed=1000 * (step + 1) + i) * scale).to(p.dtype) for i, p in enumerate(params)]


def state_tensors(opt, params):
    """(name, tensor) of every state entry of every parameter, in parameter order."""
    out = []
    for i, p in enumerate(params):
        for key, value in sorted(opt.state[p].items()):
            if isinstance(value, torch.Tensor):
                out.append((f"param {i} {key}", value))
    return out


def run_both(make, dtype, steps=STEPS, scale=None, found_inf_steps=(), lr_tensor=None, shapes=SHAPES):
    """The same optimiser on CPU and ocl over `steps` steps, compared after each; returns the final pair
    of (params, optimiser). `make(params, device)` builds the optimiser; `scale` sets a grad_scale,
    found_inf_steps the steps whose found_inf is 1."""
    cpu_params = make_params(dtype, shapes)
    ocl_params = [torch.nn.Parameter(p.detach().to(DEVICE)) for p in cpu_params]
    cpu_opt, ocl_opt = make(cpu_params, torch.device("cpu")), make(ocl_params, DEVICE)
    for step in range(steps):
        grads = grads_of(cpu_params, step, scale or 1.0)
        for p_cpu, p_ocl, g in zip(cpu_params, ocl_params, grads):
            p_cpu.grad, p_ocl.grad = g.clone(), g.to(DEVICE)
        if scale is not None or found_inf_steps:
            found = torch.tensor(1.0 if step in found_inf_steps else 0.0)
            for opt, device in ((cpu_opt, "cpu"), (ocl_opt, DEVICE)):
                opt.grad_scale = torch.tensor(float(scale or 1.0)).to(device) if scale is not None else None
                opt.found_inf = found.to(device)
        cpu_opt.step()
        ocl_opt.step()
        for i, (p_cpu, p_ocl) in enumerate(zip(cpu_params, ocl_params)):
            assert_ulps(p_ocl, p_cpu, f"step {step} param {i}")
            assert_ulps(p_ocl.grad, p_cpu.grad, f"step {step} grad {i}")
        cpu_state, ocl_state = state_tensors(cpu_opt, cpu_params), state_tensors(ocl_opt, ocl_params)
        assert [n for n, _ in cpu_state] == [n for n, _ in ocl_state]
        for (name, s_cpu), (_, s_ocl) in zip(cpu_state, ocl_state):
            if name.endswith(" step"):
                assert s_ocl.device.type == "ocl", f"{name} is on {s_ocl.device}: the kernels read it there"
                assert s_ocl.item() == s_cpu.item(), f"step {step} {name}: {s_ocl.item()} != {s_cpu.item()}"
            else:
                assert_ulps(s_ocl, s_cpu, f"step {step} {name}")
    return (cpu_params, cpu_opt), (ocl_params, ocl_opt)


ADAM_OPTIONS = {
    "plain": dict(),
    "weight_decay": dict(weight_decay=0.05),
    "amsgrad": dict(amsgrad=True, weight_decay=0.01),
    "maximize": dict(maximize=True, weight_decay=0.01),
    "amsgrad_maximize": dict(amsgrad=True, maximize=True),
    # beta1 below 0.5: the other form of the lerp (1 - beta1 >= 0.5), and another beta2 and eps
    "small_beta1": dict(betas=(0.3, 0.95), eps=1e-6, weight_decay=0.02),
}


@pytest.mark.parametrize("options", ADAM_OPTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_fused_follows_cpu_fused(name, dtype, options, strict):
    kind = getattr(torch.optim, name)
    run_both(lambda ps, d: kind(ps, lr=1e-2, fused=True, **ADAM_OPTIONS[options]), dtype)


@pytest.mark.parametrize("where", ["cpu", "ocl"])
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_fused_tensor_lr(name, where, strict):
    """lr as a tensor: torch.optim passes a CPU one as it is (read on the host) and an ocl one to the
    kernels (read on the device); the CPU side always has its own CPU tensor."""
    kind = getattr(torch.optim, name)

    def make(ps, device):
        lr = torch.tensor(3e-3)
        return kind(ps, lr=lr.to(DEVICE) if (device == DEVICE and where == "ocl") else lr, fused=True,
                    weight_decay=0.1, amsgrad=True)

    run_both(make, torch.float32)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_adam_fused_grad_scale_and_found_inf(name, dtype, strict):
    """AMP: grads divided by grad_scale (and written back unscaled), a step with found_inf = 1 changes
    nothing (and torch.optim takes its step count back)."""
    kind = getattr(torch.optim, name)
    run_both(lambda ps, d: kind(ps, lr=1e-2, fused=True, weight_decay=0.01), dtype, steps=5, scale=64.0,
             found_inf_steps=(1, 3))


SGD_OPTIONS = {
    "plain": dict(),
    "weight_decay": dict(weight_decay=0.05),
    "momentum": dict(momentum=0.9),
    "dampening": dict(momentum=0.8, dampening=0.3, weight_decay=0.01),
    "nesterov": dict(momentum=0.9, nesterov=True, weight_decay=0.01),
    "maximize": dict(momentum=0.9, maximize=True, weight_decay=0.01),
}


def skip_unless_cpu_fused_sgd_is_a_reference(dtype):
    """torch 2.11's CPU fused SGD in 16 bits (the GPU host's) moves parameters by up to 0.16 from
    p - lr * g computed in float: the same ocl results then differ from it on PoCL and NVIDIA alike,
    while torch 2.15's agrees with ocl to the bit. One plain step against float math decides which."""
    if dtype == torch.float32:
        return
    p, g = rand(91, dtype=dtype, seed=3), rand(91, dtype=dtype, seed=4)
    expected = (p.float() - 0.05 * g.float()).to(dtype).float()
    param = torch.nn.Parameter(p.clone())
    param.grad = g.clone()
    torch.optim.SGD([param], lr=0.05, fused=True).step()
    error = (param.detach().float() - expected).abs().max().item()
    if error > 2 * 2.0 ** -MANTISSA[dtype] * expected.abs().max().item():
        pytest.skip(f"torch {torch.__version__}'s CPU fused SGD in {dtype} is {error:.3g} off p - lr * g: not a reference")


@pytest.mark.parametrize("options", SGD_OPTIONS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_sgd_fused_follows_cpu_fused(dtype, options, strict):
    """The first step (is_first_step: the momentum buffer is the gradient) and the later ones."""
    skip_unless_cpu_fused_sgd_is_a_reference(dtype)
    run_both(lambda ps, d: torch.optim.SGD(ps, lr=0.05, fused=True, **SGD_OPTIONS[options]), dtype)


@pytest.mark.parametrize("where", ["cpu", "ocl"])
def test_sgd_fused_tensor_lr(where, strict):
    def make(ps, device):
        lr = torch.tensor(0.03)
        return torch.optim.SGD(ps, lr=lr.to(DEVICE) if (device == DEVICE and where == "ocl") else lr, fused=True,
                               momentum=0.9, weight_decay=0.01)

    run_both(make, torch.float32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sgd_fused_grad_scale_and_found_inf(dtype, strict):
    skip_unless_cpu_fused_sgd_is_a_reference(dtype)
    # found_inf not on the first step: there the momentum buffers are still torch.empty_like.
    run_both(lambda ps, d: torch.optim.SGD(ps, lr=0.05, fused=True, momentum=0.9, nesterov=True), dtype, steps=5,
             scale=1024.0, found_inf_steps=(2,))


@pytest.mark.parametrize(
    "make",
    [
        lambda ps, **kw: torch.optim.AdamW(ps, lr=1e-2, weight_decay=0.01, **kw),
        lambda ps, **kw: torch.optim.Adam(ps, lr=1e-2, amsgrad=True, weight_decay=0.01, **kw),
        lambda ps, **kw: torch.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01, **kw),
    ],
    ids=["adamw", "adam_amsgrad", "sgd_nesterov"],
)
def test_fused_follows_foreach_on_ocl(make, strict):
    """ocl fused and ocl foreach (the default on ocl, the elementwise family's ops) agree to the
    foreach path's own tolerance: the same step computed two ways on the device."""
    # No empty tensor: the foreach step's add of one falls back (elementwise_ops.cpp), fused skips it.
    base = make_params(torch.float32, [s for s in SHAPES if s != (0,)])
    fused_params = [torch.nn.Parameter(p.detach().to(DEVICE)) for p in base]
    foreach_params = [torch.nn.Parameter(p.detach().to(DEVICE)) for p in base]
    fused, foreach = make(fused_params, fused=True), make(foreach_params, foreach=True)
    for step in range(STEPS):
        for ps in (fused_params, foreach_params):
            for p, g in zip(ps, grads_of(base, step)):
                p.grad = g.to(DEVICE)
        fused.step()
        foreach.step()
    for i, (a, b) in enumerate(zip(fused_params, foreach_params)):
        torch.testing.assert_close(a.detach().cpu(), b.detach().cpu(), **TOLERANCES[torch.float32],
                                   msg=lambda m, i=i: f"param {i}: {m}")
    for (name, a), (_, b) in zip(state_tensors(fused, fused_params), state_tensors(foreach, foreach_params)):
        torch.testing.assert_close(a.cpu(), b.cpu(), **TOLERANCES[torch.float32], msg=lambda m, n=name: f"{n}: {m}")


def strided(t, layout):
    """A copy of t (on DEVICE) in another layout: "t" transposed memory, "slice" every other element of
    a larger buffer (not dense), "contiguous"."""
    t = t.to(DEVICE)
    if layout == "contiguous":
        return t
    if layout == "t":
        return t.t().contiguous().t()
    big = torch.zeros(t.shape[0], 2 * t.shape[1], dtype=t.dtype, device=DEVICE)
    view = big[:, ::2]
    view.copy_(t)
    return view


@pytest.mark.parametrize("layout", ["t", "slice", "mixed"])
@pytest.mark.parametrize("op", ["adamw", "adam", "sgd"])
def test_fused_ops_take_strided_tensors(op, layout, strict):
    """Parameters, gradients and state of any strides on ocl give what the CPU gives on contiguous copies
    of the same values, and only the viewed elements change: all transposed alike (the dense kernels,
    after the dims are merged), all every other element (the strided kernels), and each operand in its
    own layout ("mixed": contiguous, transposed, sliced in turn)."""
    shape = (9, 14)
    if op == "sgd":
        names = ["param", "grad", "momentum_buffer"]
        cpu = [rand(*shape, seed=40 + k) for k in range(3)]
    else:
        names = ["param", "grad", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"]
        p, g, m, v = (rand(*shape, seed=40 + k) for k in range(4))
        v = v.abs() * 0.1
        cpu = [p, g, m, v, v + 0.1 * rand(*shape, seed=60).abs()]
    layouts = ["contiguous", "t", "slice"] if layout == "mixed" else [layout]
    ocl = [strided(t, layouts[k % len(layouts)]) for k, t in enumerate(cpu)]
    bases = [t._base if t._base is not None else t for t in ocl]
    before = [b.cpu() for b in bases]
    for step_count in (1.0, 2.0):
        if op == "sgd":
            args = dict(weight_decay=0.01, momentum=0.9, lr=0.1, dampening=0.1, nesterov=True, maximize=False,
                        is_first_step=False)
            torch._fused_sgd_([cpu[0]], [cpu[1]], [cpu[2]], **args)
            torch._fused_sgd_([ocl[0]], [ocl[1]], [ocl[2]], **args)
        else:
            fn = torch._fused_adamw_ if op == "adamw" else torch._fused_adam_
            args = dict(lr=1e-2, beta1=0.9, beta2=0.999, weight_decay=0.01, eps=1e-8, amsgrad=True, maximize=False)
            fn([cpu[0]], [cpu[1]], [cpu[2]], [cpu[3]], [cpu[4]], [torch.tensor(step_count)], **args)
            fn([ocl[0]], [ocl[1]], [ocl[2]], [ocl[3]], [ocl[4]], [torch.tensor(step_count, device=DEVICE)], **args)
        for name, a, e in zip(names, ocl, cpu):
            assert_ulps(a, e, f"{op} {layout} {name}")
    # The elements between the viewed ones stay as they were.
    for k, (name, b, b0) in enumerate(zip(names, bases, before)):
        if layouts[k % len(layouts)] == "slice":
            assert torch.equal(b.cpu()[:, 1::2], b0[:, 1::2]), name


def test_comparison_catches_a_wrong_coefficient(strict):
    """The CPU comparison fails, in every dtype, for a beta1 off by 0.01, a beta2 off by 0.0005, an eps
    off by 10x where it matters (near sqrt(exp_avg_sq)), a weight decay off by 10% (Adam) or by a decay
    factor off by 1% (AdamW), an SGD momentum off by 0.01 and a dampening off by 0.05: the tolerances
    above are tight enough to see them."""
    wrong = [
        (torch.optim.AdamW, 1e-2, dict(betas=(0.9, 0.999)), dict(betas=(0.91, 0.999))),
        (torch.optim.Adam, 1e-2, dict(betas=(0.9, 0.999)), dict(betas=(0.9, 0.9995))),
        (torch.optim.Adam, 1e-2, dict(eps=0.1), dict(eps=1.0)),
        (torch.optim.Adam, 1e-2, dict(weight_decay=0.5), dict(weight_decay=0.55)),
        (torch.optim.AdamW, 1e-2, dict(weight_decay=1.0), dict(weight_decay=2.0)),
        (torch.optim.SGD, 0.05, dict(momentum=0.9), dict(momentum=0.91)),
        (torch.optim.SGD, 0.05, dict(momentum=0.9, dampening=0.1), dict(momentum=0.9, dampening=0.15)),
    ]
    for dtype in DTYPES:
        for kind, lr, right_kw, wrong_kw in wrong:

            def make(ps, device, kind=kind, lr=lr, right_kw=right_kw, wrong_kw=wrong_kw):
                return kind(ps, lr=lr, fused=True, **(right_kw if device.type == "cpu" else wrong_kw))

            with pytest.raises(AssertionError):
                run_both(make, dtype, steps=3, shapes=[(257,), (33, 9)])


def test_functional_overload_and_state_steps_on_device(strict):
    """aten::_fused_adamw (out of place: PyTorch's composite clones and calls the in-place op here)
    leaves its inputs and returns the updated copies; the step count is an ocl tensor."""
    fused_adamw = torch.ops.aten._fused_adamw.default
    p, g, m, v = (rand(5, 7, seed=k) for k in range(4))
    v = v.abs()
    steps = [torch.tensor(3.0)]
    args = dict(lr=1e-2, beta1=0.9, beta2=0.999, weight_decay=0.1, eps=1e-8, amsgrad=False, maximize=True)
    expected = fused_adamw([p], [g], [m], [v], [], steps, **args)
    ocl_in = [t.to(DEVICE) for t in (p, g, m, v)]
    got = fused_adamw(*[[t] for t in ocl_in], [], [steps[0].to(DEVICE)], **args)
    for k, (a_list, e_list) in enumerate(zip(got, expected)):
        for a, e in zip(a_list, e_list):
            assert_ulps(a, e, f"output {k}")
    for t, t0 in zip(ocl_in, (p, g, m, v)):
        assert torch.equal(t.cpu(), t0)


def test_mismatched_lists_raise(strict):
    p = [torch.zeros(3, device=DEVICE)]
    with pytest.raises(RuntimeError, match="grads"):
        torch._fused_adam_(p, [], p, p, [], [torch.zeros((), device=DEVICE)], lr=1e-3, beta1=0.9, beta2=0.99,
                           weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)
    with pytest.raises(RuntimeError, match="momentum"):
        torch._fused_sgd_(p, p, [], weight_decay=0.0, momentum=0.9, lr=0.1, dampening=0.0, nesterov=False,
                          maximize=False, is_first_step=False)
    with pytest.raises(RuntimeError, match="dtype"):
        torch._fused_sgd_(p, [torch.zeros(3, device=DEVICE, dtype=torch.float16)], [], weight_decay=0.0,
                          momentum=0.0, lr=0.1, dampening=0.0, nesterov=False, maximize=False, is_first_step=False)


@pytest.mark.filterwarnings("ignore:ocltune_torch")
def test_float64_takes_the_counted_fallback(monkeypatch):
    """float64 parameters: PyTorch's CPU kernel on copies, counted as any fallback."""
    monkeypatch.delenv("OCLTUNE_TORCH_STRICT", raising=False)
    ocltune_torch.reset_fallback_stats()
    p_cpu = torch.nn.Parameter(rand(11, dtype=torch.float64))
    p_ocl = torch.nn.Parameter(p_cpu.detach().to(DEVICE))
    opts = [torch.optim.AdamW([p], lr=1e-2, fused=True) for p in (p_cpu, p_ocl)]
    for p, opt in zip((p_cpu, p_ocl), opts):
        p.grad = rand(11, dtype=torch.float64, seed=3).to(p.device)
        opt.step()
    torch.testing.assert_close(p_ocl.detach().cpu(), p_cpu.detach(), rtol=0, atol=0)
    assert ocltune_torch.fallback_stats().get("aten::_fused_adamw_") == 1, ocltune_torch.fallback_stats()
