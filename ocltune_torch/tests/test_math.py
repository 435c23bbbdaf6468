"""Math ops on the elementwise family (exp, log, sqrt, pow, clamp, addcmul, lerp, ...) and the optimisers on them."""

import copy

import pytest
import torch

import ocltune_torch
from conftest import DEVICE, FLOAT_DTYPES, assert_close, rand


def positive(*shape, dtype=torch.float32, seed=0):
    return (rand(*shape, seed=seed).abs() + 0.1).to(dtype)


UNARY = {
    "exp": torch.exp,
    "log": torch.log,
    "sqrt": torch.sqrt,
    "rsqrt": torch.rsqrt,
    "neg": torch.neg,
    "abs": torch.abs,
    "reciprocal": torch.reciprocal,
    "square": torch.square,
    "pow3": lambda x: x**3.0,
    "pow_half": lambda x: x**0.5,
    "rpow": lambda x: 2.0**x,
    "sign": torch.sign,
}


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_unary_matches_cpu_forward_and_backward(name, dtype):
    fn = UNARY[name]
    ocltune_torch.reset_fallback_stats()
    a = positive(6, 19, dtype=dtype)
    x = a.clone().requires_grad_()
    x_ocl = a.to(DEVICE).requires_grad_()
    y, y_ocl = fn(x), fn(x_ocl)
    assert_close(y_ocl, y.detach(), scale=4)
    g = rand(6, 19, seed=2).to(dtype)
    y.backward(g)
    y_ocl.backward(g.to(DEVICE))
    assert_close(x_ocl.grad, x.grad, scale=4)
    assert ocltune_torch.fallback_stats() == {}, ocltune_torch.fallback_stats()


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "rsqrt", "neg", "abs", "reciprocal", "sign"])
def test_in_place(name):
    a = positive(3, 5)
    x = a.to(DEVICE)
    t = x.t()  # a transposed view: written in place through its own layout
    getattr(t, name + "_")()
    expected = getattr(a.t(), name)()
    assert_close(t, expected)
    assert_close(x, expected.t())


def test_binary_math_broadcasts():
    ocltune_torch.reset_fallback_stats()
    a, b = positive(4, 1, 7), positive(5, 1, seed=1)
    x, y = a.to(DEVICE), b.to(DEVICE)
    assert_close(torch.maximum(x, y), torch.maximum(a, b))
    assert_close(torch.minimum(x, y), torch.minimum(a, b))
    assert_close(torch.pow(x, y), torch.pow(a, b), scale=4)
    assert_close(torch.div(x, y, rounding_mode=None), torch.div(a, b))
    out = torch.empty(0, device=DEVICE)
    torch.mul(x, y, out=out)  # out= resizes and writes
    assert_close(out, a * b)
    torch.add(x, y, alpha=2, out=out)
    assert_close(out, torch.add(a, b, alpha=2))
    assert ocltune_torch.fallback_stats() == {}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_addcmul_addcdiv_lerp(dtype):
    ocltune_torch.reset_fallback_stats()
    s, t1, t2 = positive(9, 13, dtype=dtype), positive(9, 13, dtype=dtype, seed=1), positive(13, dtype=dtype, seed=2)
    o = [t.to(DEVICE) for t in (s, t1, t2)]
    assert_close(torch.addcmul(o[0], o[1], o[2], value=-0.3), torch.addcmul(s, t1, t2, value=-0.3))
    assert_close(torch.addcdiv(o[0], o[1], o[2], value=0.7), torch.addcdiv(s, t1, t2, value=0.7))
    for w in (0.1, 0.9):
        assert_close(torch.lerp(o[0], o[1], w), torch.lerp(s, t1, w))
    x = o[0].clone()
    x.addcmul_(o[1], o[1], value=2.0).lerp_(o[1], 0.25).addcdiv_(o[1], o[1] + 1, value=-1.0)
    assert_close(x, s.clone().addcmul_(t1, t1, value=2.0).lerp_(t1, 0.25).addcdiv_(t1, t1 + 1, value=-1.0))
    assert ocltune_torch.fallback_stats() == {}


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(17, 31), torch.nn.GELU(), torch.nn.Linear(31, 5))


@pytest.mark.parametrize(
    "make",
    [
        lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-4),
        lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, foreach=False),
        lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.01),
        lambda p: torch.optim.Adam(p, lr=1e-2, foreach=False),
    ],
    ids=["sgd_foreach", "sgd_nesterov_loop", "adamw_foreach", "adam_loop"],
)
def test_optimiser_steps_follow_cpu(make):
    ocltune_torch.reset_fallback_stats()
    cpu_model = model()
    ocl_model = copy.deepcopy(cpu_model).to(DEVICE)
    cpu_opt, ocl_opt = make(cpu_model.parameters()), make(ocl_model.parameters())
    x, target = rand(8, 17, seed=5), rand(8, 5, seed=6)
    x_ocl, target_ocl = x.to(DEVICE), target.to(DEVICE)
    for _ in range(3):
        for m, opt, xi, ti in ((cpu_model, cpu_opt, x, target), (ocl_model, ocl_opt, x_ocl, target_ocl)):
            opt.zero_grad()
            loss = (m(xi) - ti).square().mean()
            loss.backward()
            opt.step()
    for p_cpu, p_ocl in zip(cpu_model.parameters(), ocl_model.parameters()):
        assert_close(p_ocl.detach(), p_cpu.detach(), rtol=1e-4, atol=1e-5)
    assert ocltune_torch.fallback_stats() == {}, ocltune_torch.fallback_stats()
