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
    "elu": F.elu,
    "elu_alpha": lambda x: F.elu(x, alpha=0.7),
    "selu": F.selu,  # elu with a scale
    "celu": lambda x: F.celu(x, alpha=0.6),  # elu with an input_scale
    "softplus": F.softplus,
    "softplus_beta": lambda x: F.softplus(x, beta=2.0),
    "softplus_threshold": lambda x: F.softplus(x, beta=3.0, threshold=0.2),
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


@pytest.mark.parametrize("name", ["relu", "relu6", "hardswish", "hardsigmoid", "silu", "gelu", "elu", "selu", "celu"])
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


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_hardtanh_bounds_other_than_relu6(dtype):
    # The bounds themselves are among the inputs: the gradient is 0 there, as on the CPU.
    ocltune_torch.reset_fallback_stats()
    a = inputs(3, 17, dtype=dtype)
    x = a.clone().requires_grad_()
    x_ocl = a.to(DEVICE).requires_grad_()
    y, y_ocl = F.hardtanh(x, -0.5, 1.25), F.hardtanh(x_ocl, -0.5, 1.25)
    assert_close(y_ocl, y.detach())
    g = rand(3, 17, seed=5).to(dtype)
    y.backward(g)
    y_ocl.backward(g.to(DEVICE))
    assert_close(x_ocl.grad, x.grad)
    assert "aten::hardtanh_backward" not in ocltune_torch.fallback_stats()


def test_threshold_backward_other_than_zero():
    a = inputs(4, 6)
    a.view(-1)[7] = 0.5  # the threshold itself: no gradient
    g = rand(4, 6, seed=2)
    ocltune_torch.reset_fallback_stats()
    got = torch.ops.aten.threshold_backward(g.to(DEVICE), a.to(DEVICE), 0.5)
    assert_close(got, torch.ops.aten.threshold_backward(g, a, 0.5))
    assert ocltune_torch.fallback_stats() == {}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_elu_scale_and_input_scale(dtype):
    # elu_backward of both forms (from the input and, after an in-place elu, from the result) with a scale and
    # an input_scale at once, odd sizes and a transposed input; no fallback in either direction.
    ocltune_torch.reset_fallback_stats()
    a = inputs(9, 23, dtype=dtype)
    g = rand(23, 9, seed=4).to(dtype)
    args = (0.7, 1.3, 0.8)  # alpha, scale, input_scale
    for is_result in (False, True):
        v = torch.ops.aten.elu(a, *args) if is_result else a
        got = torch.ops.aten.elu_backward(g.to(DEVICE), *args, is_result, v.to(DEVICE).t())
        assert_close(got, torch.ops.aten.elu_backward(g, *args, is_result, v.t()))
    assert_close(torch.ops.aten.elu(a.to(DEVICE).t(), *args), torch.ops.aten.elu(a.t(), *args))
    x, x_ocl = a.clone().requires_grad_(), a.to(DEVICE).requires_grad_()
    for t, gt in ((x, g.t()), (x_ocl, g.t().to(DEVICE))):
        y = F.selu(t * 1.0, inplace=True)  # the in-place form's backward takes the result
        y.backward(gt)
    assert_close(x_ocl.grad, x.grad)
    empty = torch.empty(1, 0, 3, device=DEVICE, dtype=dtype)
    assert torch.ops.aten.elu_backward(empty, 1.0, 1.0, 1.0, False, empty).shape == (1, 0, 3)
    assert ocltune_torch.fallback_stats() == {}


def test_unsupported_arguments_fall_back_and_are_counted():
    # softplus with a threshold above 20: no kernel takes it.
    ocltune_torch.reset_fallback_stats()
    a = inputs(4, 6)
    for fn, op in ((lambda t: F.softplus(t, threshold=30.0), "aten::softplus"),):
        x = a.clone().requires_grad_()
        x_ocl = a.to(DEVICE).requires_grad_()
        fn(x).sum().backward()
        fn(x_ocl).sum().backward()
        assert_close(x_ocl.grad, x.grad)
        assert ocltune_torch.fallback_stats().get(op, 0) >= 1, op
