"""Issue 41's soak, short: training steps of a CNN and a transformer encoder in strict mode with the
allocator's memory, its device buffers and the process's resident memory flat after warm-up
(bench/soak.py; its 1,000-step run is in docs/PERFORMANCE.md)."""

import os
import subprocess
import sys

import pytest

from conftest import DEVICE

SOAK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "soak.py")


@pytest.mark.parametrize("model", ["resnet18", "encoder"])
def test_memory_is_flat_after_warm_up(model):
    done = subprocess.run([sys.executable, SOAK, "--model", model, "--steps", "60", "--warmup", "10",
                           "--device", str(DEVICE)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "OCLTUNE_TORCH_STRICT": "1"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.strip().endswith("flat")
