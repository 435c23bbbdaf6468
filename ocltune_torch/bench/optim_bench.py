"""Time of one optimiser step over a BERT-like encoder's parameters, foreach against fused, same process.

    python ocltune_torch/bench/optim_bench.py                                   (ocl:0, BERT-base: 12 x 768/3072)
    python ocltune_torch/bench/optim_bench.py --layers 2 --hidden 128 --ffn 512  (PoCL)
    python ocltune_torch/bench/optim_bench.py --device cuda                      (the same on CUDA, for reference)

The parameters are those of `--layers` encoder layers (query, key, value and output projections of
`--hidden`, the feed-forward pair of `--ffn`, two layer norms: 16 tensors a layer, 192 for BERT-base)
with random gradients. Each optimiser (`--optimizers`, default adamw) steps them `--warmup` times, then
`--reps` steps are timed each from the call to the device being idle ("total") and to the return of
`step()` ("host": what the host spends issuing it); the medians of foreach=True and fused=True are
printed with the ratio foreach / fused (above 1: fused is faster). With foreach a step launches about
12 kernels per tensor on ocl (Adam), fused one (ocltune_torch/csrc/fused_optim_ops.cpp).

A CUDA device runs without importing ocltune_torch (see models.py: a registered PrivateUse1 backend
changes torch's accelerator).
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from op_breakdown import synchronize  # noqa: E402


def encoder_shapes(layers, hidden, ffn):
    shapes = []
    for _ in range(layers):
        for _ in range(4):  # query, key, value, attention output
            shapes += [(hidden, hidden), (hidden,)]
        shapes += [(ffn, hidden), (ffn,), (hidden, ffn), (hidden,)]
        shapes += [(hidden,)] * 4  # two layer norms: weight and bias
    return shapes


def make_optimizer(name, params, **kw):
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-4, weight_decay=0.01, **kw)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-4, **kw)
    return torch.optim.SGD(params, lr=1e-3, momentum=0.9, **kw)


def measure(name, mode, device, shapes, warmup, reps):
    """[median total ms, median host ms] of one step of `name` with foreach or fused (`mode`)."""
    g = torch.Generator().manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(s, generator=g).to(device)) for s in shapes]
    for p in params:
        p.grad = torch.randn(p.shape, generator=g).to(device)
    opt = make_optimizer(name, params, **{mode: True})
    for _ in range(warmup):  # the first step also creates the state
        opt.step()
    synchronize(device)
    total, host = [], []
    for _ in range(reps):
        start = time.perf_counter()
        opt.step()
        issued = time.perf_counter()
        synchronize(device)
        total.append((time.perf_counter() - start) * 1e3)
        host.append((issued - start) * 1e3)
    return [statistics.median(total), statistics.median(host)]


parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--device", default="ocl:0")
parser.add_argument("--optimizers", default="adamw", help="comma-separated: adamw, adam, sgd")
parser.add_argument("--layers", type=int, default=12)
parser.add_argument("--hidden", type=int, default=768)
parser.add_argument("--ffn", type=int, default=3072)
parser.add_argument("--warmup", type=int, default=3)
parser.add_argument("--reps", type=int, default=10)
parser.add_argument("--json", help="write the figures here")
args = parser.parse_args()

if args.device.startswith("ocl"):  # "ocl" is a device type only once the backend is imported
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    import ocltune_torch  # noqa: E402,F401
device = torch.device(args.device)
if device.type == "ocl":
    os.environ["OCLTUNE_TORCH_STRICT"] = "1"  # a step that fell back to the CPU would time the copies
    name = torch.ocl.get_device_name(device)
else:
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
shapes = encoder_shapes(args.layers, args.hidden, args.ffn)
elements = sum(torch.Size(s).numel() for s in shapes)
print(f"torch {torch.__version__}; {args.device}: {name}; {len(shapes)} parameter tensors, {elements / 1e6:.2f} M "
      f"elements ({args.layers} layers of {args.hidden}/{args.ffn}); medians of {args.reps} steps")
print(f"{'optimizer':10} {'foreach ms':>11} {'fused ms':>10} {'ratio':>7} {'foreach host':>13} {'fused host':>11} "
      f"{'ratio':>7}")
results = []
for opt_name in args.optimizers.split(","):
    foreach = measure(opt_name, "foreach", device, shapes, args.warmup, args.reps)
    fused = measure(opt_name, "fused", device, shapes, args.warmup, args.reps)
    print(f"{opt_name:10} {foreach[0]:11.2f} {fused[0]:10.2f} {foreach[0] / fused[0]:7.2f} {foreach[1]:13.2f} "
          f"{fused[1]:11.2f} {foreach[1] / fused[1]:7.2f}")
    results.append(dict(optimizer=opt_name, foreach_ms=foreach[0], fused_ms=fused[0], foreach_host_ms=foreach[1],
                        fused_host_ms=fused[1]))
if args.json:
    with open(args.json, "w") as f:
        json.dump(dict(command=" ".join(sys.argv), torch=torch.__version__, device=name, tensors=len(shapes),
                       elements=elements, results=results), f, indent=1)
