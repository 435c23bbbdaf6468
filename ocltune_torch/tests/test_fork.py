"""DataLoader workers and fork() after the device was opened (issue 41). A forked child inherits the
parent's OpenCL context without the driver's threads; using the device there used to hang until the
loader's timeout. Now the child is refused the device with an error naming the fix (the 'spawn' start
method), as CUDA does; workers that return CPU tensors work as before, and so do spawned workers that
use the device."""

import subprocess
import sys
import textwrap

import pytest
import torch
from torch.utils.data import DataLoader, Dataset

from conftest import DEVICE


class Samples(Dataset):
    """Sample i is a vector of i; with `on_device`, the worker doubles it on ocl first."""

    def __init__(self, on_device):
        self.on_device = on_device

    def __len__(self):
        return 8

    def __getitem__(self, i):
        x = torch.full((4,), float(i))
        if self.on_device:
            x = (x.to(DEVICE) * 2).cpu()
        return x


def open_the_device():
    w = torch.ones(4, 3, device=DEVICE)
    assert w.sum().item() == 12.0
    return w


def test_forked_workers_returning_cpu_tensors_feed_the_device_through_pinned_memory():
    w = open_the_device()
    total = 0.0
    for batch in DataLoader(Samples(False), batch_size=4, num_workers=2, pin_memory=True,
                            multiprocessing_context="fork"):
        assert batch.is_pinned()  # pinned by the parent's pin thread, on ocl's pinned allocator
        total += (batch.to(DEVICE, non_blocking=True) @ w).sum().item()
    assert total == 3 * 4 * sum(range(8))


def test_a_forked_worker_is_refused_the_device_with_the_fix_named():
    open_the_device()
    loader = DataLoader(Samples(True), batch_size=4, num_workers=1, multiprocessing_context="fork", timeout=120)
    with pytest.raises(RuntimeError, match="forked subprocess.*spawn"):
        next(iter(loader))
    assert open_the_device().device == DEVICE  # the parent is unaffected


def test_a_spawned_worker_uses_the_device():
    open_the_device()
    loader = DataLoader(Samples(True), batch_size=8, num_workers=1, multiprocessing_context="spawn", timeout=120)
    (batch,) = list(loader)
    assert torch.equal(batch[:, 0], torch.arange(8.0) * 2)


def test_a_forked_child_exits_cleanly():
    # The child ends through the interpreter's normal exit (atexit handlers run): the handler that
    # waits for the parent's queues (ocltune_torch/__init__.py) is not the child's to run.
    script = textwrap.dedent("""
        import os, sys, torch, ocltune_torch
        assert torch.ones(3, device=sys.argv[1]).sum().item() == 3.0
        pid = os.fork()
        if pid == 0:
            assert torch.ones(3).sum().item() == 3.0
            sys.exit(0)
        _, status = os.waitpid(pid, 0)
        print("child exited", os.waitstatus_to_exitcode(status))
    """)
    done = subprocess.run([sys.executable, "-c", script, str(DEVICE)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["child", "exited", "0"], done.stdout + done.stderr[-2000:]
    assert "forked subprocess" not in done.stderr, done.stderr[-2000:]
