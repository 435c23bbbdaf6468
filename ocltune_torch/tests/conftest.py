"""Shared by the ocltune_torch suites: the test device (ocl:$OCLTUNE_TEST_DEVICE) and comparisons with CPU."""

import os
import pathlib
import sys

import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repository root, for ocltune_torch

import ocltune_torch  # noqa: E402,F401  (registers the backend)

DEVICE = torch.device("ocl", int(os.environ.get("OCLTUNE_TEST_DEVICE", "0")))

# The suites compare with CPU results at fp32 tolerances: TF32 convolutions, which ocl's follow
# cuDNN's switch for (on by default, docs/decisions/0048), are off unless a test turns them on.
if hasattr(torch.backends.cudnn, "conv"):
    torch.backends.cudnn.conv.fp32_precision = "ieee"
else:
    torch.backends.cudnn.allow_tf32 = False

# Tolerances against PyTorch's CPU result on the same inputs: fp32 accumulation everywhere, 16-bit
# storage rounding the results.
TOLERANCES = {
    torch.float32: dict(rtol=1e-4, atol=1e-5),
    torch.float16: dict(rtol=1e-2, atol=1e-3),
    torch.bfloat16: dict(rtol=2e-2, atol=1e-2),
}
FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16]


@pytest.fixture
def dev():
    return DEVICE


@pytest.fixture
def strict(monkeypatch):
    """OCLTUNE_TORCH_STRICT=1 (read at call time): a CPU fallback anywhere fails the test."""
    monkeypatch.setenv("OCLTUNE_TORCH_STRICT", "1")
    ocltune_torch.reset_fallback_stats()
    yield
    assert ocltune_torch.fallback_stats() == {}


def assert_close(actual, expected, scale=1.0, **kwargs):
    """actual (an ocl tensor) equals expected (a CPU tensor) within the tolerance of its dtype."""
    assert actual.device.type == "ocl", f"expected an ocl result, got {actual.device}"
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    tol = dict(TOLERANCES.get(expected.dtype, dict(rtol=0, atol=0)))
    tol = {k: v * scale for k, v in tol.items()}
    tol.update(kwargs)
    torch.testing.assert_close(actual.cpu(), expected, **tol)


def rand(*shape, dtype=torch.float32, seed=0):
    """Random CPU values (never all zeros), rounded to dtype."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(tuple(shape), generator=g).to(dtype)
