"""scaled_dot_product_attention forward + backward on ocl: the overrideable fused entry against SDPA's
math path, same process, same inputs: medians and their ratio.

    python ocltune_torch/bench/attention_bench.py --ocl ocl:0 --shape 2,4,64,64,32          (PoCL)
    python ocltune_torch/bench/attention_bench.py --ocl ocl:0 --shape 8,12,512,512,64 --dtype bf16 (on the H200)

`fused` is F.scaled_dot_product_attention, which the backend's _fused_sdp_choice_stub sends to
_scaled_dot_product_fused_attention_overrideable (checked: the run fails if that op is not
dispatched); `math` calls torch.ops.aten._scaled_dot_product_attention_math directly, the composite
SDPA runs for inputs the entry does not take (torch.backends.cuda's backend switches do not apply to
ocl). A step is one forward and one backward with the same upstream gradient, the device
synchronised after it; medians of `--reps` steps after `--warmup`, in ms, and math / fused (above 1:
the fused entry is faster). `--cuda cuda:0` times the same step on CUDA (`cuda / fused`: above 1, ocl is faster); `--parts` times
each GEMM of the fused entry alone. `--paths` times the fused entry's flash
kernels against its GEMM path instead (OCLTUNE_SDPA=flash and gemm, alternating; decision 0064).
`--strict` (default on) runs with OCLTUNE_TORCH_STRICT=1; the math
path's causal mask (tril) has no ocl kernel, so `--causal` needs `--no-strict` (its fallbacks are
printed beside its time).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


class OpNames(TorchDispatchMode):
    """The aten ops dispatched below autograd, by name."""

    def __init__(self):
        super().__init__()
        self.ops = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.add(func._overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def synchronize(device):
    if device.type != "cpu":
        (torch.cuda if device.type == "cuda" else torch.ocl).synchronize(device)


def median_ms(step, device, warmup, reps):
    for _ in range(warmup):
        step()
    synchronize(device)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        step()
        synchronize(device)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, times


parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--ocl", default="ocl:0")
parser.add_argument("--shape", default="2,4,64,64,32", help="B,H,L,S,E (value head dim = E)")
parser.add_argument("--dtype", choices=sorted(DTYPES), default="fp32")
parser.add_argument("--causal", action="store_true")
parser.add_argument("--dropout", type=float, default=0.0)
parser.add_argument("--warmup", type=int, default=3)
parser.add_argument("--reps", type=int, default=20)
parser.add_argument("--no-strict", dest="strict", action="store_false")
parser.add_argument("--cuda", help="also time F.scaled_dot_product_attention on this CUDA device (e.g. cuda:0), "
                    "same inputs, TF32 off, in a process of its own: the baseline of `cuda / fused` (cpu: a check of the script)")
parser.add_argument("--parts", action="store_true",
                    help="also time each GEMM of the fused entry alone (the rest of its step: the row passes and the host)")
parser.add_argument("--paths", action="store_true",
                    help="time the fused entry's two paths instead of fused against math: OCLTUNE_SDPA=flash "
                    "and =gemm, forward alone (no_grad) and forward+backward, the two alternating rep by rep")
parser.add_argument("--json", help="write the figures here")
parser.add_argument("--measure-only", help=argparse.SUPPRESS)  # the child that times --cuda
args = parser.parse_args()
if args.strict:
    os.environ["OCLTUNE_TORCH_STRICT"] = "1"

b, h, l, s, e = (int(x) for x in args.shape.split(","))
dtype = DTYPES[args.dtype]


def inputs(device):
    """q, k, v (leaves) and the upstream gradient, the same values on every device."""
    g = torch.Generator().manual_seed(0)
    q, k, v, grad = (torch.randn(shape, generator=g).to(dtype).to(device)
                     for shape in [(b, h, l, e), (b, h, s, e), (b, h, s, e), (b, h, l, e)])
    return [x.requires_grad_() for x in (q, k, v)], grad


if args.measure_only:
    # CUDA in a process of its own without ocltune_torch, as models.py runs it: once a PrivateUse1
    # backend is registered, torch's accelerator is that backend and CUDA's own backward trips an
    # internal assert of the autograd engine (pytorch/pytorch#161129).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    cuda = torch.device(args.measure_only)
    cuda_leaves, cuda_grad = inputs(cuda)

    def cuda_step():
        for x in cuda_leaves:
            x.grad = None
        F.scaled_dot_product_attention(*cuda_leaves, dropout_p=args.dropout, is_causal=args.causal).backward(cuda_grad)

    ms, times = median_ms(cuda_step, cuda, args.warmup, args.reps)
    print(json.dumps(dict(ms=ms, times_ms=[t * 1e3 for t in times])))
    sys.exit(0)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import ocltune_torch  # noqa: E402

device = torch.device(args.ocl)
leaves, grad = inputs(device)
q, k, v = leaves

paths = {
    "fused": lambda: F.scaled_dot_product_attention(*leaves, dropout_p=args.dropout, is_causal=args.causal),
    "math": lambda: torch.ops.aten._scaled_dot_product_attention_math(
        *leaves, dropout_p=args.dropout, is_causal=args.causal)[0],
}


def step_of(forward):
    def step():
        for x in leaves:
            x.grad = None
        forward().backward(grad)

    return step


with OpNames() as names:
    step_of(paths["fused"])()
fused_op = "_scaled_dot_product_fused_attention_overrideable"
assert fused_op in names.ops, f"the fused entry was not dispatched: {sorted(names.ops)}"

print(f"torch {torch.__version__}; ocl: {torch.ocl.get_device_name(device)}; "
      f"[B, H, L, S, E] = [{b}, {h}, {l}, {s}, {e}] {args.dtype}"
      f"{' causal' if args.causal else ''}{f' dropout {args.dropout}' if args.dropout else ''}")
figures = {}
if args.paths:
    # The fused entry reads OCLTUNE_SDPA at every call, so one process times both paths on the same
    # inputs, alternating flash and gemm (and which goes first) so that a noisy machine hits both alike.
    def forward_only():
        with torch.no_grad():
            paths["fused"]()

    for mode, step in [("forward", forward_only), ("forward+backward", step_of(paths["fused"]))]:
        times = {"flash": [], "gemm": []}
        for path in times:
            os.environ["OCLTUNE_SDPA"] = path
            for _ in range(args.warmup):
                step()
        synchronize(device)
        for rep in range(args.reps):
            for path in (("flash", "gemm") if rep % 2 == 0 else ("gemm", "flash")):
                os.environ["OCLTUNE_SDPA"] = path
                start = time.perf_counter()
                step()
                synchronize(device)
                times[path].append((time.perf_counter() - start) * 1e3)
        medians = {path: statistics.median(t) for path, t in times.items()}
        figures[mode] = dict(ms=medians, times_ms=times, ratio=medians["gemm"] / medians["flash"])
        print(f"{mode:17} flash {medians['flash']:10.3f} ms   gemm {medians['gemm']:10.3f} ms   "
              f"gemm / flash {medians['gemm'] / medians['flash']:.3f} (medians of {args.reps}, alternating)")
    os.environ.pop("OCLTUNE_SDPA")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(command=" ".join(sys.argv), torch=torch.__version__,
                           ocl_device=torch.ocl.get_device_name(device), shape=[b, h, l, s, e], dtype=args.dtype,
                           causal=args.causal, dropout=args.dropout, **figures), f, indent=1)
    sys.exit(0)
for name, forward in paths.items():
    ocltune_torch.reset_fallback_stats()
    ms, times = median_ms(step_of(forward), device, args.warmup, args.reps)
    figures[name] = dict(ms=ms, times_ms=[t * 1e3 for t in times], fallbacks=ocltune_torch.fallback_stats())
    fallbacks = figures[name]["fallbacks"]
    print(f"{name:6} forward+backward {ms:10.3f} ms (median of {args.reps})" +
          (f"  fallbacks: {fallbacks}" if fallbacks else ""))
ratio = figures["math"]["ms"] / figures["fused"]["ms"]
print(f"math / fused {ratio:.3f}")
if args.cuda:
    child = subprocess.run([sys.executable, os.path.abspath(__file__), "--measure-only", args.cuda] + sys.argv[1:],
                           capture_output=True, text=True, check=True)
    figures["cuda"] = json.loads(child.stdout.strip().splitlines()[-1])
    ms = figures["cuda"]["ms"]
    print(f"cuda   forward+backward {ms:10.3f} ms (median of {args.reps}); cuda / fused {ms / figures['fused']['ms']:.3f}")
if args.parts:
    # The GEMMs the fused entry runs (attention_ops.cpp: the scores twice, once in forward and once
    # in backward), each alone on tensors of the problem's shape; what the step takes beyond their
    # sum is its two row passes (softmax + dropout, and their backward) and the host.
    with torch.no_grad():
        q3, k3, v3, g3 = (x.detach().reshape(b * h, x.shape[2], x.shape[3]) for x in (q, k, v, grad))
        scale = e ** -0.5
        unused = torch.empty((), device=device, dtype=dtype)
        w = torch.softmax(torch.bmm(q3, k3.transpose(1, 2)), -1)
        parts = {
            "scores baddbmm (QK^T, NT), x2": (2, lambda: torch.baddbmm(unused, q3, k3.transpose(1, 2), beta=0,
                                                                        alpha=scale)),
            "out bmm (P~V, NN)": (1, lambda: torch.bmm(w, v3)),
            "grad_v bmm (P~^T dO, TN)": (1, lambda: torch.bmm(w.transpose(1, 2), g3)),
            "dP~ bmm (dO V^T, NT)": (1, lambda: torch.bmm(g3, v3.transpose(1, 2))),
            "grad_q baddbmm (dS K, NN)": (1, lambda: torch.baddbmm(unused, w, k3, beta=0, alpha=scale)),
            "grad_k baddbmm (dS^T Q, TN)": (1, lambda: torch.baddbmm(unused, w.transpose(1, 2), q3, beta=0,
                                                                      alpha=scale)),
        }
        figures["parts"] = {}
        for name, (times, op) in parts.items():
            ms, _ = median_ms(op, device, args.warmup, args.reps)
            figures["parts"][name] = times * ms
            print(f"  part {name:32} {times * ms:8.3f} ms")
        rest = figures["fused"]["ms"] - sum(figures["parts"].values())
        figures["parts"]["row passes, host (fused - GEMMs)"] = rest
        print(f"  part {'row passes, host (fused - GEMMs)':32} {rest:8.3f} ms")
if args.json:
    with open(args.json, "w") as f:
        json.dump(dict(command=" ".join(sys.argv), torch=torch.__version__,
                       ocl_device=torch.ocl.get_device_name(device), shape=[b, h, l, s, e], dtype=args.dtype,
                       causal=args.causal, dropout=args.dropout, ratio=ratio, **figures), f, indent=1)
