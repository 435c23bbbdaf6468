"""The CPU fallback: ops without an ocl kernel still work, are counted per op, warn once, and fail in strict mode."""

import os
import subprocess
import sys

import pytest
import torch

import ocltune_torch
from conftest import DEVICE, assert_close, rand


def test_fallback_computes_and_counts():
    ocltune_torch.reset_fallback_stats()
    a = rand(4, 5)
    x = a.to(DEVICE)
    # Ops no kernel of the backend computes (lgamma, digamma, logcumsumexp, sinh): the fallback's work.
    assert_close(torch.lgamma(x), a.lgamma())
    assert_close(torch.digamma(x), a.digamma())
    assert_close(torch.lgamma(x), a.lgamma())
    r = torch.logcumsumexp(x, 0)  # the fallback's results come back to the device
    assert r.device == DEVICE
    assert_close(r, torch.logcumsumexp(a, 0))
    stats = ocltune_torch.fallback_stats()
    # Functional ops of PyTorch's structured kernels reach the backend as their out= variant.
    assert stats["aten::lgamma.out"] == 2 and stats["aten::digamma.out"] == 1 and stats["aten::_logcumsumexp"] == 1
    x.sinh_()  # in place through the fallback writes back into x
    assert_close(x, a.sinh())
    ocltune_torch.reset_fallback_stats()
    assert ocltune_torch.fallback_stats() == {}


def test_implemented_ops_do_not_fall_back():
    ocltune_torch.reset_fallback_stats()
    a, b = rand(8, 8).to(DEVICE), rand(8, 8, seed=1).to(DEVICE)
    y = torch.softmax(torch.relu(a @ b + 1) * 2 - a / (b * b + 1), dim=1).sum(0).mean()
    y = y + torch.zeros(1, device=DEVICE) + a.t().contiguous()[0, :1] + torch.sigmoid(torch.tanh(a)).sum()
    y.item()
    assert ocltune_torch.fallback_stats() == {}


WARN_SCRIPT = """
import warnings, torch, ocltune_torch
x = torch.ones(3, device="{device}")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    torch.lgamma(x)
    torch.lgamma(x)
    torch.digamma(x)
for w in caught:
    print("WARNING:", w.message)
"""


def test_warns_once_per_op():
    # In a fresh process, so that no earlier test has used up the one warning of these ops.
    out = run_python(WARN_SCRIPT.format(device=DEVICE), {})
    lines = [line for line in out.splitlines() if line.startswith("WARNING: ocltune_torch")]
    assert sum("aten::lgamma.out runs on the CPU" in line for line in lines) == 1, out
    assert sum("aten::digamma.out runs on the CPU" in line for line in lines) == 1, out


def run_python(script, extra_env):
    env = dict(os.environ, **extra_env)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = repo + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


STRICT_SCRIPT = """
import torch, ocltune_torch
x = torch.ones(3, device="{device}")
y = (x + 1).cpu()  # ours: fine in strict mode
try:
    torch.lgamma(x)
except RuntimeError as e:
    print("RAISED:", e)
else:
    print("NOT RAISED")
"""


@pytest.mark.parametrize("strict", ["1", "0"])
def test_strict_mode(strict):
    stdout = run_python(STRICT_SCRIPT.format(device=DEVICE), {"OCLTUNE_TORCH_STRICT": strict})
    if strict == "1":
        assert "RAISED:" in stdout and "aten::lgamma.out" in stdout and "OCLTUNE_TORCH_STRICT" in stdout
    else:
        assert "NOT RAISED" in stdout


def test_strict_mode_is_read_at_call_time(monkeypatch):
    x = torch.ones(2, device=DEVICE)
    monkeypatch.setenv("OCLTUNE_TORCH_STRICT", "1")
    with pytest.raises(RuntimeError, match="OCLTUNE_TORCH_STRICT"):
        torch.lgamma(x)
    monkeypatch.setenv("OCLTUNE_TORCH_STRICT", "0")
    assert torch.lgamma(x).cpu().tolist() == [0.0, 0.0]


def test_convolution_without_a_kernel_runs_through_the_cpu():
    # PyTorch routes convolutions of unknown backends to convolution_overrideable, past the boxed
    # fallback; what the conv2d family cannot compute (here a 3-D convolution) ocltune_torch runs,
    # with its backward, on CPU copies, counted.
    ocltune_torch.reset_fallback_stats()
    torch.manual_seed(0)
    conv = torch.nn.Conv3d(3, 4, 3, padding=1)
    ocl_conv = torch.nn.Conv3d(3, 4, 3, padding=1)
    ocl_conv.load_state_dict(conv.state_dict())
    ocl_conv.to(DEVICE)
    x = rand(2, 3, 4, 7, 5)
    y, y_ocl = conv(x), ocl_conv(x.to(DEVICE))
    assert_close(y_ocl, y.detach())
    y.square().sum().backward()
    y_ocl.square().sum().backward()
    assert_close(ocl_conv.weight.grad, conv.weight.grad, scale=10)
    assert_close(ocl_conv.bias.grad, conv.bias.grad, scale=10)
    stats = ocltune_torch.fallback_stats()
    assert stats["aten::convolution_overrideable"] == 1 and stats["aten::convolution_backward_overrideable"] == 1
