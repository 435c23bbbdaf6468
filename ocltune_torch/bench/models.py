"""Step times of real models on ocl against a baseline device in the same process: medians, ratios.

    python ocltune_torch/bench/models.py --baseline cpu   --models resnet18,mobilenet_v2 --batch 2 --size 64
    python ocltune_torch/bench/models.py --baseline cuda  --models all                  (on the H200)

For each model and mode (inference: eval + no_grad; training: forward, loss, backward, optimiser step)
it times `--reps` steps after `--warmup` steps on each device, synchronising the device after every
step, and prints the median per device and the ratio baseline / ocl (above 1: ocl is faster); then
`--reps` steps back to back with one synchronisation at the end, as a training loop runs them (the
"b2b" columns: ms per step, and their ratio), the peak
memory each caching allocator had allocated (MiB; cuda and ocl) and the buffers ocl created during
the timed steps (clCreateBuffer calls: 0 once the allocator serves a steady state). Both
devices get the same weights and inputs. `--precision fp32` turns TF32 off on both sides (CUDA's
matmul and cuDNN; ocl's "highest" float32 matmul precision); `--precision default` leaves PyTorch's
defaults. `--strict` (default on) runs ocl with OCLTUNE_TORCH_STRICT=1, so no op falls back to the
CPU unseen. `--autocast fp16|bf16` runs forward and loss under torch.autocast on both devices (no
GradScaler). `--fused-optimizer` passes fused=True to AdamW and SGD on both devices (default: their
foreach step). `--json FILE` writes every figure with the command line and versions. `--breakdown N`
then runs one more step per device with every aten op synchronised and timed (op_breakdown.py) and
prints the N ops and (op, shapes) problems ocl spends most time in, beside the baseline's time;
with `--breakdown-only OPS` only those ops are synchronised and timed, the rest of the step runs at
its own pace: a check of what the every-op synchronisation itself does to an op's time.

A CUDA baseline runs in a child process that never imports ocltune_torch: once a PrivateUse1 backend
is registered, torch's accelerator is that backend and CUDA's own backward trips an internal assert
of the autograd engine (pytorch/pytorch#161129). Same command, same seeds, same inputs.
"""

import argparse
import contextlib
import copy
import json
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import op_breakdown  # noqa: E402


MODELS = ["resnet50", "resnet18", "mobilenet_v2", "encoder"]


def make_model(name):
    if name == "encoder":
        layer = torch.nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.1, activation="gelu", batch_first=True)
        return torch.nn.TransformerEncoder(layer, num_layers=args.layers, enable_nested_tensor=False)
    import torchvision

    return getattr(torchvision.models, name)(num_classes=1000)


def make_batch(name, batch, size, seq):
    g = torch.Generator().manual_seed(0)
    if name == "encoder":
        return torch.randn(batch, seq, 768, generator=g), torch.randn(batch, seq, 768, generator=g)
    return torch.randn(batch, 3, size, size, generator=g), torch.randint(0, 1000, (batch,), generator=g)


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "ocl":
        torch.ocl.synchronize(device)


def allocator(device):
    """torch.cuda or torch.ocl, whose caching allocators keep the same statistics; None for the CPU."""
    return {"cuda": torch.cuda, "ocl": getattr(torch, "ocl", None)}.get(device.type)


def time_steps(step, device, warmup, reps):
    """The median step in ms, every step's seconds, the memory (peak allocated MiB since run() reset
    it, and the driver allocations, cudaMalloc or clCreateBuffer, the synchronised steps made, which a
    caching allocator keeps at 0 in steady state), and the ms per step of `reps` steps back to back,
    the device synchronised once after the last."""
    for _ in range(warmup):
        step()
    synchronize(device)
    mem = allocator(device)
    allocs = mem.memory_stats(device).get("num_device_alloc", 0) if mem else 0
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        step()
        synchronize(device)
        times.append(time.perf_counter() - start)
    memory = None
    if mem:
        memory = dict(peak_mib=mem.max_memory_allocated(device) / 2**20,
                      steady_device_allocs=mem.memory_stats(device).get("num_device_alloc", 0) - allocs)
    start = time.perf_counter()
    for _ in range(reps):
        step()
    synchronize(device)
    back_to_back_ms = (time.perf_counter() - start) / reps * 1e3
    return statistics.median(times) * 1e3, times, memory, back_to_back_ms


def run(name, mode, device, model, x, target, compiled=False):
    mem = allocator(device)
    if mem:
        mem.reset_peak_memory_stats(device)
    model = copy.deepcopy(model).to(device)
    if compiled:  # --compile: the warm-up steps include Dynamo's capture and the backend's compile
        model = torch.compile(model, backend=args.compile)
    x, target = x.to(device), target.to(device)
    loss_fn = F.mse_loss if name == "encoder" else F.cross_entropy
    # --autocast: the forward (and the loss) under torch.autocast on the device, as a user's mixed-precision
    # loop; no GradScaler (the backend has no _amp_foreach_non_finite_check_and_unscale_ yet), on both devices.
    amp = (torch.autocast(device_type=device.type, dtype=AUTOCAST[args.autocast]) if args.autocast != "none"
           else contextlib.nullcontext())
    if mode == "inference":
        model.eval()

        def step():
            with torch.no_grad(), amp:
                model(x)

    else:
        model.train()
        fused = dict(fused=True) if args.fused_optimizer else {}  # else PyTorch's default: foreach
        opt = (
            torch.optim.AdamW(model.parameters(), lr=1e-4, **fused)
            if name == "encoder"
            else torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, **fused)
        )

        def step():
            opt.zero_grad(set_to_none=True)
            with amp:
                loss = loss_fn(model(x), target)
            loss.backward()
            opt.step()

    ms, times, memory, back_to_back_ms = time_steps(step, device, args.warmup, args.reps)
    ops = op_breakdown.breakdown(step, device, args.breakdown_only) if args.breakdown else None
    return ms, times, ops, memory, back_to_back_ms


AUTOCAST = {"none": None, "fp16": torch.float16, "bf16": torch.bfloat16}


def set_precision(precision):
    fp32 = precision == "fp32"
    torch.backends.cuda.matmul.allow_tf32 = not fp32 and torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = not fp32
    torch.set_float32_matmul_precision("highest" if fp32 else torch.get_float32_matmul_precision())


parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--baseline", default="cpu", help="cpu, cuda, ocl-eager (see --compile), or none (ocl only: e.g. to\n"
                    "record the shapes a model "
                    "dispatches with $OCLTUNE_TORCH_RECORD_SHAPES; --size and friends default as for cuda)")
parser.add_argument("--ocl", default="ocl:0")
parser.add_argument("--models", default="all", help="comma-separated: " + ",".join(MODELS))
parser.add_argument("--modes", default="inference,training")
parser.add_argument("--batch", type=int, default=None, help="default: 32 (cuda) or 2 (cpu); encoder: 8 or 2")
parser.add_argument("--size", type=int, default=None, help="image side: default 224 (cuda) or 64 (cpu)")
parser.add_argument("--seq", type=int, default=None, help="encoder sequence: default 512 (cuda) or 16 (cpu)")
parser.add_argument("--layers", type=int, default=None, help="encoder layers: default 12 (cuda) or 2 (cpu)")
parser.add_argument("--warmup", type=int, default=3)
parser.add_argument("--reps", type=int, default=10)
parser.add_argument("--precision", choices=["fp32", "default"], default="fp32")
parser.add_argument("--autocast", choices=sorted(AUTOCAST), default="none",
                    help="run forward and loss under torch.autocast in this dtype on both devices (no GradScaler)")
parser.add_argument("--compile", metavar="BACKEND", default=None,
                    help='run the ocl side under torch.compile(model, backend=BACKEND), e.g. "ocltune"; with\n'
                         '--baseline ocl-eager the baseline is the same ocl device without it (compiled vs eager)')
parser.add_argument("--no-strict", dest="strict", action="store_false")
parser.add_argument("--fused-optimizer", action="store_true",
                    help="fused=True for the optimisers on both devices (one kernel per tensor and step)")
parser.add_argument("--json", help="write the figures here")
parser.add_argument("--gbench-json", metavar="FILE",
                    help="also write them as Google Benchmark JSON for `ocltune report --bench` (the nightly run):\n"
                    "model/<precision>/<model>-<mode>-b<batch>/<device>, steps/s and the median step time")
parser.add_argument("--gbench-context", metavar="BENCH_JSON",
                    help="take that file's context (device, versions) for --gbench-json: ocltune_bench's output of\n"
                    "the same device, so the report files the steps under that device")
parser.add_argument("--breakdown", type=int, default=0, metavar="N",
                    help="after timing, list the N ops ocl spends most time in, beside the baseline's")
parser.add_argument("--breakdown-only", type=lambda v: [op for op in v.split(",") if op], default=None,
                    metavar="OPS", help="synchronise and time only these aten ops (comma-separated, e.g.\n"
                    "convolution_backward); the rest of the step runs at its own pace")
parser.add_argument("--measure-only", help=argparse.SUPPRESS)  # the child process of a CUDA baseline
args = parser.parse_args()

big = args.baseline.startswith("cuda") or args.baseline in ("none", "ocl-eager")
args.size = args.size or (224 if big else 64)
args.seq = args.seq or (512 if big else 16)
args.layers = args.layers or (12 if big else 2)
if args.strict:
    os.environ["OCLTUNE_TORCH_STRICT"] = "1"
set_precision(args.precision)
names = MODELS if args.models == "all" else args.models.split(",")


def batch_of(name):
    return args.batch or ((8 if name == "encoder" else 32) if big else 2)


def cases():
    for name in names:
        torch.manual_seed(0)
        model = make_model(name)
        x, target = make_batch(name, batch_of(name), args.size, args.seq)
        for mode in args.modes.split(","):
            yield name, mode, model, x, target


if args.measure_only:  # child: one JSON line per case, no ocltune_torch in this process
    for name, mode, model, x, target in cases():
        ms, times, ops, memory, b2b = run(name, mode, torch.device(args.measure_only), model, x, target)
        print(json.dumps(dict(model=name, mode=mode, ms=ms, times=times, breakdown=ops, memory=memory,
                              back_to_back_ms=b2b)), flush=True)
    sys.exit(0)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import ocltune_torch  # noqa: E402

ocl = torch.device(args.ocl)
# "ocl-eager": the ocl device itself, eager, against its --compile run (compiled against eager).
baseline = None if args.baseline == "none" else ocl if args.baseline == "ocl-eager" else torch.device(args.baseline)
baseline_figures = {}
if baseline is not None and baseline.type == "cuda":
    child = subprocess.run([sys.executable, os.path.abspath(__file__), "--measure-only", args.baseline] + sys.argv[1:],
                           capture_output=True, text=True, check=True)
    for line in child.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            baseline_figures[(r["model"], r["mode"])] = (r["ms"], r["times"], r["breakdown"], r["memory"],
                                                         r["back_to_back_ms"])
results = []
print(f"torch {torch.__version__}; ocl: {torch.ocl.get_device_name(ocl)}; baseline: {args.baseline}; precision {args.precision}; autocast {args.autocast}")
print(f"{'model':14} {'mode':10} {'batch':>5} {args.baseline + ' ms':>10} {'ocl ms':>10} {'ratio':>7}"
      f" {args.baseline + ' b2b':>10} {'ocl b2b':>10} {'ratio':>7} {args.baseline + ' MiB':>10} {'ocl MiB':>9}"
      f" {'allocs':>6}")
for name, mode, model, x, target in cases():
    batch = batch_of(name)
    if baseline is None:
        base_ms, base_times, base_ops, base_memory, base_b2b = float("nan"), [], None, None, float("nan")
    elif baseline.type == "cuda":
        base_ms, base_times, base_ops, base_memory, base_b2b = baseline_figures[(name, mode)]
    else:
        base_ms, base_times, base_ops, base_memory, base_b2b = run(name, mode, baseline, model, x, target)
    ocltune_torch.reset_fallback_stats()
    ocl_ms, ocl_times, ocl_ops, ocl_memory, ocl_b2b = run(name, mode, ocl, model, x, target,
                                                          compiled=bool(args.compile))
    fallbacks = ocltune_torch.fallback_stats()
    ratio, b2b_ratio = base_ms / ocl_ms, base_b2b / ocl_b2b
    base_mib = f"{base_memory['peak_mib']:10.0f}" if base_memory else f"{'-':>10}"
    # allocs: the buffers ocl created during the timed steps (0 when the caching allocator serves them)
    print(f"{name:14} {mode:10} {batch:5d} {base_ms:10.2f} {ocl_ms:10.2f} {ratio:7.3f} {base_b2b:10.2f} "
          f"{ocl_b2b:10.2f} {b2b_ratio:7.3f} {base_mib} "
          f"{ocl_memory['peak_mib']:9.0f} {ocl_memory['steady_device_allocs']:6d}" +
          (f"  fallbacks: {fallbacks}" if fallbacks else ""))
    if args.breakdown:
        op_breakdown.print_comparison(args.baseline, base_ops or dict(op={}, problem=[], step_ms=float("nan")), ocl_ops,
                                      args.breakdown)
    results.append(dict(model=name, mode=mode, batch=batch, baseline=args.baseline, baseline_ms=base_ms,
                        ocl_ms=ocl_ms, ratio=ratio, baseline_back_to_back_ms=base_b2b, ocl_back_to_back_ms=ocl_b2b,
                        back_to_back_ratio=b2b_ratio, baseline_times_ms=[t * 1e3 for t in base_times],
                        ocl_times_ms=[t * 1e3 for t in ocl_times], fallbacks=fallbacks,
                        baseline_memory=base_memory, ocl_memory=ocl_memory,
                        baseline_breakdown=base_ops, ocl_breakdown=ocl_ops))
if args.gbench_json:
    context = {}
    if args.gbench_context:
        with open(args.gbench_context) as f:
            context = json.load(f).get("context", {})
    benchmarks = []
    label = args.precision + ("" if args.autocast == "none" else f"-autocast-{args.autocast}")
    for r in results:
        for device, ms, times in (("ocl", r["ocl_ms"], r["ocl_times_ms"]),
                                  (r["baseline"], r["baseline_ms"], r["baseline_times_ms"])):
            if not times:
                continue
            spread = (max(times) - min(times)) / ms if ms > 0 else 0.0
            benchmarks.append(dict(name=f"model/{label}/{r['model']}-{r['mode']}-b{r['batch']}/{device}",
                                   run_type="iteration", iterations=len(times), median_us=ms * 1e3,
                                   **{"steps/s": 1e3 / ms, "spread": spread}))
    with open(args.gbench_json, "w") as f:
        json.dump(dict(context=context, benchmarks=benchmarks), f, indent=1)
if args.json:
    with open(args.json, "w") as f:
        json.dump(dict(command=" ".join(sys.argv), torch=torch.__version__, precision=args.precision, autocast=args.autocast,
                       fused_optimizer=args.fused_optimizer, compile=args.compile,
                       ocl_device=torch.ocl.get_device_name(ocl), size=args.size, seq=args.seq, layers=args.layers,
                       results=results), f, indent=1)
