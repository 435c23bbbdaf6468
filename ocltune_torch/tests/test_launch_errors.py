"""A launch the driver refuses (issue 41): CL_OUT_OF_RESOURCES or CL_MEM_OBJECT_ALLOCATION_FAILURE from
clEnqueueNDRangeKernel, on a family kernel of the runtime or on a plain kernel of the backend, is a
Python exception that names the op and the error, never an abort, and the process goes on working
once launches succeed again. The refusals come from a shim loaded with LD_PRELOAD into a child
process (tests/support/fail_enqueue.c, built next to the backend library)."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from conftest import DEVICE

# What each case's message names: the op for the runtime's families, the kernel for plain kernels.
NAMED = {"exp": "exp failed", "mm": "mm failed", "cast": "copy", "cumsum": "cumulative"}

SHIM = pathlib.Path(os.environ.get("OCLTUNE_TORCH_LIBRARY", "")).parent / "libocltune_test_fail_enqueue.so"

CHILD = textwrap.dedent("""
    import json, os, sys, torch, ocltune_torch

    dev, code = sys.argv[1], sys.argv[2]
    x = torch.randn(1000)
    a, b = torch.randn(40, 30), torch.randn(30, 20)
    cases = {
        "exp": lambda: x.to(dev).exp().cpu(),                   # the elementwise family
        "mm": lambda: (a.to(dev) @ b.to(dev)).cpu(),            # the GEMM family
        "cast": lambda: x.to(dev).to(torch.int32).cpu(),        # a plain kernel
        "cumsum": lambda: torch.cumsum(x.to(dev), 0).cpu(),     # plain kernels, several launches
    }
    expected = {name: op() for name, op in cases.items()}     # programs built, decisions made
    refused = {}
    os.environ["OCLTUNE_TEST_FAIL_ENQUEUE"] = code
    for name, op in cases.items():
        try:
            op()
            refused[name] = None
        except Exception as e:  # noqa: BLE001  (the test reads the type and message)
            refused[name] = [type(e).__name__, str(e)]
    del os.environ["OCLTUNE_TEST_FAIL_ENQUEUE"]
    torch.ocl.synchronize(dev)
    again = {name: bool(torch.equal(op(), expected[name])) for name, op in cases.items()}
    print(json.dumps({"refused": refused, "again": again}))
""")


@pytest.mark.parametrize("code,name", [(-5, "CL_OUT_OF_RESOURCES"), (-4, "CL_MEM_OBJECT_ALLOCATION_FAILURE")])
def test_a_refused_launch_raises_naming_the_op_and_the_process_goes_on(code, name):
    assert SHIM.is_file(), f"{SHIM} is missing: build the target ocltune_test_fail_enqueue"
    env = {**os.environ, "LD_PRELOAD": str(SHIM)}
    done = subprocess.run([sys.executable, "-c", CHILD, f"ocl:{DEVICE.index}", str(code)], capture_output=True,
                          text=True, timeout=300, env=env)
    assert done.returncode == 0, f"exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    for op, error in result["refused"].items():
        assert error is not None, f"{op} did not raise while every launch was refused"
        kind, message = error
        assert kind in ("RuntimeError", "OutOfMemoryError"), (op, kind, message)
        assert name in message and "ocltune_torch" in message, (op, message)
        assert NAMED[op] in message, (op, message)  # the aten op, or the plain kernel that refused
    assert all(result["again"].values()), result["again"]
