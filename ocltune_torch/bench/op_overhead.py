"""Host cost of one small op on ocl against a baseline device, same command: microseconds per call.

    python ocltune_torch/bench/op_overhead.py --baseline cpu          (PoCL)
    python ocltune_torch/bench/op_overhead.py --baseline cuda         (on the H200)

Each case is a chain of `--chain` calls of one op on a tiny tensor (8 elements, or 8x8 for mm), timed
from the first call to the device being idle after the last ("total": the larger of the host's
dispatch cost and the device's per-kernel cost, what a model of many small ops pays per op) and to the
return of the last call ("host": the dispatch cost alone, on a device whose queue does not block the
host). Medians of `--reps` chains after one warm-up chain. The same tiny kernel enqueued bare through
clEnqueueNDRangeKernel is build/bench/dispatch_bench's baseline (docs/PERFORMANCE.md).

A CUDA baseline runs in a child process that never imports ocltune_torch (see models.py).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from op_breakdown import synchronize  # noqa: E402


def cases(device):
    """(name, setup() -> state, call(state)) of each op timed."""
    def small():
        return torch.randn(8, device=device)

    def matrix():
        return torch.randn(8, 8, device=device)

    return [
        ("add_ (in place, scalar)", small, lambda x: x.add_(1.0)),
        ("add (out of place, allocates)", small, lambda x: x + x),
        ("relu", small, lambda x: torch.relu(x)),
        ("mul_ broadcast row", lambda: (matrix(), torch.ones(8, device=device)), lambda s: s[0].mul_(s[1])),
        ("sum (to a scalar)", small, lambda x: x.sum()),
        ("softmax (8x8 rows)", matrix, lambda x: torch.softmax(x, -1)),
        ("mm (8x8x8)", matrix, lambda x: x @ x),
        ("view + contiguous copy", matrix, lambda x: x.t().contiguous()),
        ("_foreach_add_ (4 tensors)", lambda: [torch.randn(8, device=device) for _ in range(4)],
         lambda xs: torch._foreach_add_(xs, 1.0)),
        # A small CNN's per-layer ops (mobilenet_v2's inference is a chain of 52 of each).
        ("conv2d 3x3 (1x8x8x8)", lambda: (torch.randn(1, 8, 8, 8, device=device),
                                         torch.randn(8, 8, 3, 3, device=device)),
         lambda s: torch.nn.functional.conv2d(s[0], s[1], padding=1)),
        ("batch_norm eval (1x8x8x8)", lambda: (torch.randn(1, 8, 8, 8, device=device),
                                              *(torch.rand(8, device=device) + 0.5 for _ in range(4))),
         lambda s: torch.nn.functional.batch_norm(s[0], s[1], s[2], s[3], s[4], training=False)),
    ]


def measure(device, chain, reps):
    """{case: [median total microseconds per call, median host microseconds per call]}."""
    figures = {}
    for name, setup, call in cases(device):
        state = setup()
        total, host = [], []
        for rep in range(reps + 1):
            synchronize(device)
            start = time.perf_counter()
            for _ in range(chain):
                call(state)
            issued = time.perf_counter()
            synchronize(device)
            if rep > 0:  # the first chain warms caches, decisions and programs
                total.append((time.perf_counter() - start) / chain * 1e6)
                host.append((issued - start) / chain * 1e6)
        figures[name] = [statistics.median(total), statistics.median(host)]
    return figures


parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--baseline", default="cpu", help="cpu or cuda")
parser.add_argument("--ocl", default="ocl:0")
parser.add_argument("--chain", type=int, default=200)
parser.add_argument("--reps", type=int, default=7)
parser.add_argument("--json", help="write the figures here")
parser.add_argument("--measure-only", help=argparse.SUPPRESS)  # the child process of a CUDA baseline
args = parser.parse_args()

if args.measure_only:
    print(json.dumps(measure(torch.device(args.measure_only), args.chain, args.reps)), flush=True)
    sys.exit(0)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import ocltune_torch  # noqa: E402,F401

baseline, ocl = torch.device(args.baseline), torch.device(args.ocl)
if baseline.type == "cuda":
    child = subprocess.run([sys.executable, os.path.abspath(__file__), "--measure-only", args.baseline] + sys.argv[1:],
                           capture_output=True, text=True, check=True)
    base = json.loads([line for line in child.stdout.splitlines() if line.startswith("{")][-1])
else:
    base = measure(baseline, args.chain, args.reps)
ours = measure(ocl, args.chain, args.reps)
print(f"torch {torch.__version__}; ocl: {torch.ocl.get_device_name(ocl)}; baseline: {args.baseline}; "
      f"chains of {args.chain} calls, medians of {args.reps}")
b = args.baseline
print(f"{'op':32} {b + ' total us':>14} {'ocl total us':>14} {'ratio':>7} {b + ' host us':>13} {'ocl host us':>13} {'ratio':>7}")
for name, (total, host) in ours.items():
    base_total, base_host = base[name]
    print(f"{name:32} {base_total:14.2f} {total:14.2f} {base_total / total:7.3f} {base_host:13.2f} {host:13.2f} "
          f"{base_host / host:7.3f}")
if args.json:
    with open(args.json, "w") as f:
        json.dump(dict(command=" ".join(sys.argv), torch=torch.__version__, ocl_device=torch.ocl.get_device_name(ocl),
                       baseline=args.baseline, baseline_us=base, ocl_us=ours), f, indent=1)
