"""Backward through autograd on ocl against CPU gradients: mm, add, mul, relu, softmax, and a small MLP."""

import pytest
import torch
import torch.nn.functional as F

from conftest import DEVICE, assert_close, rand


def grads(f, *inputs, device):
    leaves = [x.detach().to(device).requires_grad_() for x in inputs]
    out = f(*leaves)
    out.backward(torch.ones_like(out))
    return out, [x.grad for x in leaves]


def check(f, *inputs, scale=1.0):
    out_cpu, g_cpu = grads(f, *inputs, device="cpu")
    out_ocl, g_ocl = grads(f, *inputs, device=DEVICE)
    assert_close(out_ocl, out_cpu.detach(), scale=scale)
    for a, b in zip(g_ocl, g_cpu):
        assert a is not None and a.device == DEVICE
        assert_close(a, b, scale=scale)


def test_mm_backward():
    check(lambda a, b: a @ b, rand(7, 13), rand(13, 5, seed=1), scale=10)
    check(lambda a, b: a.t() @ b, rand(13, 7), rand(13, 5, seed=1), scale=10)


def test_add_mul_backward_with_broadcasting():
    check(lambda a, b: (a + b) * b - a * 2, rand(4, 6), rand(6, seed=1))
    check(lambda a, b: torch.add(a, b, alpha=3) * a, rand(2, 3, 4), rand(3, 1, seed=1))


def test_relu_softmax_backward():
    check(lambda a: torch.relu(a) * a, rand(5, 8))
    check(lambda a, w: (torch.softmax(a, dim=1) * w).sum(1), rand(6, 9), rand(6, 9, seed=1))
    check(lambda a, w: (torch.log_softmax(a, dim=-1) * w).sum(), rand(3, 4, 5), rand(3, 4, 5, seed=1))


@pytest.mark.parametrize("dtype", [torch.float32])
def test_mlp_training_step(dtype):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    ocl_model = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    ocl_model.load_state_dict(model.state_dict())
    ocl_model.to(DEVICE)
    x, target = rand(8, 12), torch.arange(8) % 3
    for m, xx, tt in ((model, x, target), (ocl_model, x.to(DEVICE), target.to(DEVICE))):
        loss = F.cross_entropy(m(xx), tt)
        loss.backward()
        with torch.no_grad():
            for p in m.parameters():
                p.add_(p.grad, alpha=-0.1)
    for p_cpu, p_ocl in zip(model.parameters(), ocl_model.parameters()):
        assert p_ocl.device == DEVICE
        assert_close(p_ocl.detach(), p_cpu.detach(), scale=10)
        assert_close(p_ocl.grad, p_cpu.grad, scale=10)
