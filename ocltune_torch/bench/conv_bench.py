"""Convolutions of real models, one direction at a time, on ocl against a baseline device in the same
command: where a model's convolution time goes (forward, input gradient, weight gradient).

    python ocltune_torch/bench/conv_bench.py --baseline cuda --ocl ocl:1      (on the H200)
    python ocltune_torch/bench/conv_bench.py --baseline cpu --shapes small    (PoCL; resnet-b4: larger)

Each case is aten.convolution (forward) or aten.convolution_backward with one output (the input or
the weight gradient), fp32 (or `--dtype fp16|bf16`: input, weight and gradient of that dtype, as under
autocast), TF32 off on both sides. Two figures per case, medians of --reps:
"synced" times one call with the device idle before and after it (what models.py --breakdown sees);
"chained" times --chain calls back to back, per call (what a model step sees when the host keeps
ahead). A large synced figure with a small chained one is latency (host cost, gaps between kernels);
both large is the kernels. The ocl side also prints the lookup level of each case's problem.

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

# (name, N, C, H, K, R, stride): padding R // 2, square images and filters, groups 1.
SHAPES = {
    "resnet": [
        ("resnet50 3x3 64@56", 32, 64, 56, 64, 3, 1),
        ("resnet50 3x3 128@28", 32, 128, 28, 128, 3, 1),
        ("resnet50 3x3 256@14", 32, 256, 14, 256, 3, 1),
        ("resnet50 3x3 512@7", 32, 512, 7, 512, 3, 1),
        ("resnet50 3x3 s2 128@56", 32, 128, 56, 128, 3, 2),
        ("resnet50 1x1 1024->256@14", 32, 1024, 14, 256, 1, 1),
        ("resnet50 1x1 256->1024@14", 32, 256, 14, 1024, 1, 1),
        ("resnet50 1x1 s2 256->512@56", 32, 256, 56, 512, 1, 2),
        ("resnet 7x7 s2 3->64@224", 32, 3, 224, 64, 7, 2),
    ],
    # resnet50's layers at batch 4: large enough on a CPU device for the passes' memory traffic, not
    # the launches, to decide.
    "resnet-b4": [
        ("resnet50 3x3 64@56 b4", 4, 64, 56, 64, 3, 1),
        ("resnet50 3x3 s2 128@56 b4", 4, 128, 56, 128, 3, 2),
        ("resnet50 1x1 256->64@56 b4", 4, 256, 56, 64, 1, 1),
    ],
    "small": [
        ("3x3 16@14", 4, 16, 14, 16, 3, 1),
        ("1x1 32->16@7", 4, 32, 7, 16, 1, 1),
        ("3x3 s2 8->16@15", 2, 8, 15, 16, 3, 2),
    ],
}
DIRECTIONS = ("forward", "input grad", "weight grad")


DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def cases(device, shapes, dtype):
    """(name, direction, call) for every shape and direction."""
    out = []
    for name, n, c, h, k, r, stride in SHAPES[shapes]:
        gen = torch.Generator().manual_seed(0)
        x = torch.randn(n, c, h, h, generator=gen).to(dtype).to(device)
        w = (torch.randn(k, c, r, r, generator=gen) / (c * r * r) ** 0.5).to(dtype).to(device)
        pad = r // 2
        y = torch.nn.functional.conv2d(x, w, stride=stride, padding=pad)
        dy = torch.randn(y.shape, generator=gen).to(dtype).to(device)
        common = ([stride, stride], [pad, pad], [1, 1], False, [0, 0], 1)

        def backward(mask, dy=dy, x=x, w=w, common=common):
            return lambda: torch.ops.aten.convolution_backward(dy, x, w, None, *common, mask)

        out.append((name, "forward", lambda x=x, w=w, common=common: torch.ops.aten.convolution(x, w, None, *common)))
        out.append((name, "input grad", backward([True, False, False])))
        out.append((name, "weight grad", backward([False, True, False])))
    return out


def measure(device, shapes, chain, reps, dtype):
    """{"name / direction": [synced ms, chained ms per call]}."""
    if device.type == "cuda":
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.benchmark = True
    figures = {}
    for name, direction, call in cases(device, shapes, DTYPES[dtype]):
        for _ in range(3):  # programs, decisions, cuDNN's algorithm search
            call()
        synchronize(device)
        synced, chained = [], []
        for _ in range(reps):
            synchronize(device)
            start = time.perf_counter()
            call()
            synchronize(device)
            synced.append((time.perf_counter() - start) * 1e3)
        for _ in range(reps):
            synchronize(device)
            start = time.perf_counter()
            for _ in range(chain):
                call()
            synchronize(device)
            chained.append((time.perf_counter() - start) * 1e3 / chain)
        figures[f"{name} / {direction}"] = [statistics.median(synced), statistics.median(chained)]
    return figures


def levels():
    """{shape key: lookup level} of the conv2d problems the ocl side dispatched."""
    import ocltune_torch

    found = {}
    for device in ocltune_torch.dispatch_stats()["devices"].values():
        for p in device["problems"]:
            if p["op"] == "conv2d":
                found[p["shape_key"]] = p["level"]
    return found


parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--baseline", default="cpu", help="cpu, cuda or none")
parser.add_argument("--ocl", default="ocl:0")
parser.add_argument("--shapes", default="resnet", choices=sorted(SHAPES))
parser.add_argument("--chain", type=int, default=10)
parser.add_argument("--reps", type=int, default=11)
parser.add_argument("--dtype", default="fp32", choices=sorted(DTYPES))
parser.add_argument("--json", help="write the figures here")
parser.add_argument("--measure-only", help=argparse.SUPPRESS)  # the child process of a CUDA baseline
args = parser.parse_args()

if args.measure_only:
    print(json.dumps(measure(torch.device(args.measure_only), args.shapes, args.chain, args.reps, args.dtype)),
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
    base = measure(torch.device(args.baseline), args.shapes, args.chain, args.reps, args.dtype)
ocltune_torch.reset_dispatch_stats()
ours = measure(ocl, args.shapes, args.chain, args.reps, args.dtype)
found = levels()
print(f"torch {torch.__version__}; ocl: {torch.ocl.get_device_name(ocl)}; baseline: {args.baseline}; {args.dtype}; "
      f"medians of {args.reps}; chains of {args.chain}")
print(f"levels of the {len(found)} conv2d problems: "
      + ", ".join(f"{lv} {sum(1 for v in found.values() if v == lv)}" for lv in sorted(set(found.values()))))
b = args.baseline
print(f"{'case':44} {b + ' synced':>12} {'ocl synced':>11} {'ratio':>6} {b + ' chained':>13} {'ocl chained':>12} "
      f"{'ratio':>6}  (ms per call)")
for key, (synced, chained) in ours.items():
    bs, bc = base.get(key, [float("nan"), float("nan")])
    print(f"{key:44} {bs:12.3f} {synced:11.3f} {bs / synced:6.3f} {bc:13.3f} {chained:12.3f} {bc / chained:6.3f}")
if args.json:
    with open(args.json, "w") as f:
        json.dump(dict(command=" ".join(sys.argv), torch=torch.__version__, ocl_device=torch.ocl.get_device_name(ocl),
                       dtype=args.dtype, baseline=b, baseline_ms=base, ocl_ms=ours, ocl_levels=found), f, indent=1)
