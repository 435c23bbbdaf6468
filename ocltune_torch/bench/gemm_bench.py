"""Matrix products in each precision a user switches on, on ocl against a baseline device in the same
command: fp32 with TF32 off, fp32 with TF32 allowed (torch.set_float32_matmul_precision("high")),
fp16 and bf16.

    python ocltune_torch/bench/gemm_bench.py --baseline cuda --ocl ocl:1      (on the H200)
    python ocltune_torch/bench/gemm_bench.py --baseline cpu --shapes small    (PoCL)

Each case is torch.mm on packed operands. Figures per case are medians of --reps, each the time of
--chain calls back to back divided by the chain (what a model step sees when the host keeps ahead),
as ms and TFLOP/s. The ocl side also prints the lookup level and the math mode of each problem it
dispatched: a TF32 case whose problem says "exact" ran without tensor cores.

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

# (m, k, n): issue 38's square product and the encoder's and ViT's largest.
SHAPES = {
    "issue38": [(4096, 4096, 4096), (4096, 768, 3072), (3152, 2304, 768)],
    "small": [(64, 48, 80), (33, 17, 65)],
}
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def measure(device, shapes, precisions, chain, reps):
    """{"m x k x n / precision": ms per call}."""
    figures = {}
    try:
        for m, k, n in SHAPES[shapes]:
            for precision in precisions:
                # TF32 for the tf32 case only (cuDNN's switch is the convolutions', not touched).
                torch.set_float32_matmul_precision("high" if precision == "tf32" else "highest")
                gen = torch.Generator().manual_seed(0)
                a = torch.randn(m, k, generator=gen).to(DTYPES[precision]).to(device)
                b = torch.randn(k, n, generator=gen).to(DTYPES[precision]).to(device)
                for _ in range(3):  # programs, decisions, cuBLAS's heuristics
                    torch.mm(a, b)
                times = []
                for _ in range(reps):
                    synchronize(device)
                    start = time.perf_counter()
                    for _ in range(chain):
                        torch.mm(a, b)
                    synchronize(device)
                    times.append((time.perf_counter() - start) * 1e3 / chain)
                figures[f"{m}x{k}x{n} / {precision}"] = statistics.median(times)
    finally:
        torch.set_float32_matmul_precision("highest")
    return figures


def problems():
    """{"dtype math shape key": level} of the gemm problems the ocl side dispatched."""
    import ocltune_torch

    found = {}
    for device in ocltune_torch.dispatch_stats()["devices"].values():
        for p in device["problems"]:
            if p["op"] == "gemm":
                found[f'{p["dtype"]} {p["math"]} {p["shape_key"]}'] = p["level"]
    return found


parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--baseline", default="cpu", help="cpu, cuda or none")
parser.add_argument("--ocl", default="ocl:0")
parser.add_argument("--shapes", default="issue38", choices=sorted(SHAPES))
parser.add_argument("--precisions", default=",".join(PRECISIONS), help="comma-separated, of " + ", ".join(PRECISIONS))
parser.add_argument("--chain", type=int, default=10)
parser.add_argument("--reps", type=int, default=11)
parser.add_argument("--json", help="write the figures here")
parser.add_argument("--measure-only", help=argparse.SUPPRESS)  # the child process of a CUDA baseline
args = parser.parse_args()
precisions = args.precisions.split(",")
if any(p not in PRECISIONS for p in precisions):
    parser.error(f"--precisions: unknown precision in {args.precisions!r}; choose from {', '.join(PRECISIONS)}")

if args.measure_only:
    print(json.dumps(measure(torch.device(args.measure_only), args.shapes, precisions, args.chain, args.reps)),
          flush=True)
    sys.exit(0)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import ocltune_torch  # noqa: E402,F401

ocl = torch.device(args.ocl)
base = {}
if args.baseline == "cuda":
    child = subprocess.run([sys.executable, os.path.abspath(__file__), "--measure-only", args.baseline] + sys.argv[1:],
                           capture_output=True, text=True, check=True)
    base = json.loads([line for line in child.stdout.splitlines() if line.startswith("{")][-1])
elif args.baseline != "none":
    base = measure(torch.device(args.baseline), args.shapes, precisions, args.chain, args.reps)
ocltune_torch.reset_dispatch_stats()
ours = measure(ocl, args.shapes, precisions, args.chain, args.reps)
found = problems()
print(f"torch {torch.__version__}; ocl: {torch.ocl.get_device_name(ocl)}; baseline: {args.baseline}; "
      f"medians of {args.reps}; chains of {args.chain}")
for key, level in found.items():
    print(f"  ocl problem {key}: {level}")
b = args.baseline
print(f"{'case':28} {b + ' ms':>10} {'ocl ms':>10} {b + ' TFLOP/s':>14} {'ocl TFLOP/s':>12} {'ocl/' + b:>8}")
for key, ms in ours.items():
    m, k, n = (int(v) for v in key.split(" / ")[0].split("x"))
    tflop = 2.0 * m * n * k / 1e9  # per ms
    base_ms = base.get(key, float("nan"))
    print(f"{key:28} {base_ms:10.4f} {ms:10.4f} {tflop / base_ms:14.2f} {tflop / ms:12.2f} {base_ms / ms:8.3f}")
if args.json:
    with open(args.json, "w") as f:
        json.dump(dict(command=" ".join(sys.argv), torch=torch.__version__, ocl_device=torch.ocl.get_device_name(ocl),
                       baseline=b, baseline_ms=base, ocl_ms=ours, ocl_problems=found), f, indent=1)
