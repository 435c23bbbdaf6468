"""all_reduce bandwidth on ocl tensors (the "ocltune" c10d backend) against gloo on CPU tensors, 2 ranks on one host.

    POCL_DEVICES="pthread pthread" python ocltune_torch/bench/allreduce_bench.py     (PoCL: rank r on ocl:r)
    python ocltune_torch/bench/allreduce_bench.py --devices ocl:1,ocl:1               (both ranks on one GPU)
    python ocltune_torch/bench/allreduce_bench.py --sizes 4K,1M --reps 20 --json out.json

The script starts its two ranks itself (one process group "cpu:gloo,ocl:ocltune" over a FileStore,
gloo over loopback). For each size (float32 elements; K and M are 2^10 and 2^20) both ranks
all-reduce (SUM) an ocl tensor and a CPU tensor of that size `--warmup` times, then `--reps` times
each timed from the call until the result is back on the device (ocl: torch.ocl.synchronize), the
ranks in step (a barrier on the CPU before each). Printed: rank 0's medians in ms and the bandwidth
in GB/s as nccl-tests counts it, "algbw" = bytes / time and "busbw" = algbw x 2 (n - 1) / n, for
ocl and gloo, and gloo / ocl time (1 means the staging through host memory costs nothing).
The ocl figure is gloo's on a pinned host copy plus the copies to and from the device and the
backend's metadata exchange (one small all-gather per collective, docs/decisions/0056).
"""

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

WORLD = 2


def elements(text):
    scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1].upper(), 1)
    return int(text[:-1] if scale > 1 else text) * scale


def rank_main(args):
    import torch.distributed as dist

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    import ocltune_torch  # noqa: F401

    rank = args.rank
    devices = args.devices.split(",") if args.devices else [f"ocl:{r % torch.ocl.device_count()}" for r in range(WORLD)]
    dev = torch.device(devices[rank])
    torch.ocl.set_device(dev.index)
    dist.init_process_group("cpu:gloo,ocl:ocltune", store=dist.FileStore(args.store, WORLD), rank=rank,
                            world_size=WORLD, timeout=datetime.timedelta(seconds=120))
    figures = {"devices": devices, "device_name": torch.ocl.get_device_name(dev.index), "ocl_ms": {}, "gloo_ms": {}}
    sync = dist.new_group(backend="gloo")  # the barrier before each timed call, on CPU tensors
    for size in args.sizes.split(","):
        n = elements(size)
        for side, device in (("ocl", dev), ("gloo", torch.device("cpu"))):
            t = torch.ones(n, device=device)
            times = []
            for i in range(args.warmup + args.reps):
                dist.barrier(group=sync)
                start = time.perf_counter()
                dist.all_reduce(t)
                if device.type == "ocl":
                    torch.ocl.synchronize(dev.index)
                if i >= args.warmup:
                    times.append((time.perf_counter() - start) * 1e3)
            figures[f"{side}_ms"][size] = statistics.median(times)
    if rank == 0:
        with open(args.out, "w") as f:
            json.dump(figures, f)
    dist.barrier(group=sync)
    dist.destroy_process_group()


def gbps(nbytes, ms):
    return nbytes / (ms * 1e-3) / 1e9


def main(args):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "rank0.json")
        argv = [a for a in sys.argv[1:]]
        procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), *argv, "--rank", str(r), "--store",
                                   os.path.join(tmp, "store"), "--out", out]) for r in range(WORLD)]
        codes = [p.wait(timeout=args.timeout) for p in procs]
        if any(codes):
            sys.exit(f"allreduce_bench: the ranks exited {codes}")
        with open(out) as f:
            figures = json.load(f)
    print(f"all_reduce SUM of float32, {WORLD} ranks on {','.join(figures['devices'])} ({figures['device_name']}), "
          f"medians of {args.reps}")
    print(f"{'size':>8} {'bytes':>11} {'ocl ms':>9} {'algbw':>7} {'busbw':>7} {'gloo ms':>9} {'algbw':>7} "
          f"{'busbw':>7} {'gloo/ocl':>8}")
    figures.update(bytes={}, ocl_algbw_gbps={}, ocl_busbw_gbps={}, gloo_algbw_gbps={}, gloo_busbw_gbps={})
    for size, ocl_ms in figures["ocl_ms"].items():
        nbytes = elements(size) * 4
        gloo_ms = figures["gloo_ms"][size]
        row = {}
        for side, ms in (("ocl", ocl_ms), ("gloo", gloo_ms)):
            row[side] = (gbps(nbytes, ms), gbps(nbytes, ms) * 2 * (WORLD - 1) / WORLD)
            figures[f"{side}_algbw_gbps"][size], figures[f"{side}_busbw_gbps"][size] = row[side]
        figures["bytes"][size] = nbytes
        print(f"{size:>8} {nbytes:>11} {ocl_ms:>9.3f} {row['ocl'][0]:>7.2f} {row['ocl'][1]:>7.2f} {gloo_ms:>9.3f} "
              f"{row['gloo'][0]:>7.2f} {row['gloo'][1]:>7.2f} {gloo_ms / ocl_ms:>8.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)


parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--sizes", default="1K,64K,1M,16M", help="comma-separated float32 element counts (K, M suffixes)")
parser.add_argument("--devices", help="the ranks' ocl devices, e.g. ocl:0,ocl:1 (default: rank r on ocl:r, "
                                      "wrapping around the devices there are)")
parser.add_argument("--warmup", type=int, default=3)
parser.add_argument("--reps", type=int, default=10)
parser.add_argument("--json", help="write the figures here")
parser.add_argument("--timeout", type=float, default=1800, help="seconds the ranks may take")
parser.add_argument("--rank", type=int, help=argparse.SUPPRESS)  # the script's own ranks
parser.add_argument("--store", help=argparse.SUPPRESS)
parser.add_argument("--out", help=argparse.SUPPRESS)
parsed = parser.parse_args()
if parsed.rank is None:
    main(parsed)
else:
    rank_main(parsed)
