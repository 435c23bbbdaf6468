"""Activations and their backward ops on the elementwise family: forward and autograd against CPU, no fallback."""

import pytest
import torch
import torch.nn.functional as F

import ocltune_torch
from conftest import DEVICE, FLOAT_DTYPES, assert_close, rand

# name -> the function of x; every one is registered on ocl in forward and backward.
ACTIVATIONS = {
    "relu": F.relu,
    "relu6": F.relu6,
    "gelu": F.gelu,
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
    "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
}


def inputs(*shape, dtype=torch.float32, seed=0):
    """Values over every branch of every activation, with the kinks (0, +-3, 6) themselves included."""
    x = rand(*shape, seed=seed) * 4
    flat = x.view(-1)
    kinks = torch.tensor([0.0, -3.0, 3.0, 6.0, -0.5, 1.25])
    flat[: min(flat.numel(), kinks.numel())] = kinks[: flat.numel()]
    return x.to(dtype)


@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_forward_and_backward_match_cpu(name, dtype):
    fn = ACTIVATIONS[name]
    ocltune_torch.reset_fallback_stats()
    a = inputs(7, 37, dtype=dtype)
    g = rand(7, 37, seed=3).to(dtype)
    x = a.clone().requires_grad_()
    x_ocl = a.to(DEVICE).requires_grad_()
    y, y_ocl = fn(x), fn(x_ocl)
    assert_close(y_ocl, y.detach())
    y.backward(g)
    y_ocl.backward(g.to(DEVICE))
    assert_close(x_ocl.grad, x.grad)
    assert ocltune_torch.fallback_stats() == {}, name


@pytest.mark.parametrize("name", ["relu", "relu6", "hardswish", "hardsigmoid", "silu", "gelu"])
def test_in_place_forms(name):
    fn = getattr(F, name)
    a = inputs(5, 11)
    x = a.to(DEVICE)
    y = fn(x, inplace=True) if name != "gelu" else torch.ops.aten.gelu_(x)
    assert y.data_ptr() == x.data_ptr()
    assert_close(x, fn(a))


def test_non_contiguous_inputs_and_odd_sizes():
    ocltune_torch.reset_fallback_stats()
    a = inputs(13, 1, 29)
    for view in (lambda t: t.transpose(0, 2), lambda t: t[::2, :, 3:], lambda t: t.expand(13, 5, 29)):
        x = view(a).clone().requires_grad_()
        x_ocl = view(a.to(DEVICE)).detach().requires_grad_()
        F.gelu(x).sum().backward()
        F.gelu(x_ocl).sum().backward()
        assert_close(x_ocl.grad, x.grad)
        assert_close(F.hardswish(x_ocl), F.hardswish(x).detach())
    one = torch.tensor([-1.5], device=DEVICE)
    assert_close(F.relu(one), torch.tensor([0.0]))
    assert ocltune_torch.fallback_stats() == {}


def test_nan_and_inf_as_on_cpu():
    a = torch.tensor([float("nan"), -1.0, 2.0, float("inf"), -float("inf")])
    for name, fn in ACTIVATIONS.items():
        # PyTorch's vectorised CPU gelu gives NaN at +-Inf where the formula (and the device) give
        # +Inf and NaN: compare the finite inputs and NaN there.
        n = 3 if name == "gelu" else 5
        torch.testing.assert_close(fn(a.to(DEVICE)).cpu()[:n], fn(a)[:n], equal_nan=True, msg=name)


def test_hardtanh_bounds_other_than_relu6():
    ocltune_torch.reset_fallback_stats()
    a = inputs(3, 17)
    assert_close(F.hardtanh(a.to(DEVICE), -0.5, 1.25), F.hardtanh(a, -0.5, 1.25))
    assert ocltune_torch.fallback_stats() == {}  # forward on the device; its backward falls back (counted)


def test_unsupported_arguments_fall_back_and_are_counted():
    ocltune_torch.reset_fallback_stats()
    a = inputs(4, 6)
    x = a.clone().requires_grad_()
    x_ocl = a.to(DEVICE).requires_grad_()
    F.threshold(x, 0.5, 0.0).sum().backward()
    F.threshold(x_ocl, 0.5, 0.0).sum().backward()
    assert_close(x_ocl.grad, x.grad)
    assert ocltune_torch.fallback_stats().get("aten::threshold_backward", 0) >= 1
