"""Synthetic ocltune_bench output (Google Benchmark JSON) for the report's tests."""
import json
import random

SHAPES = ["batch=1,k=256,layout=NN,m=256,n=256", "batch=1,k=768,layout=NN,m=128,n=768"]


def bench_json(date, scale=1.0, noise=0.0, seed=0, driver="3.1", slow=None):
    """A run on a fake CPU device: GEMM tuned/default/clblast per shape plus one failed variant.

    `scale` multiplies every throughput, `noise` is the relative standard deviation of run-to-run
    noise, `slow` maps benchmark names to an extra factor (0.8 = an injected 20 % slowdown).
    """
    rng = random.Random(seed)
    context = {"date": date, "host_name": "ci", "load_avg": [1.0], "ocltune_started_at": date,
               "ocltune_device_name": "Fake CPU", "ocltune_platform_name": "Portable Computing Language",
               "ocltune_platform_version": "OpenCL 3.0 PoCL", "ocltune_driver_version": driver,
               "ocltune_compute_units": "2", "ocltune_device_key": "key-" + driver, "ocltune_device_type": "CPU",
               "ocltune_copy_gbs": f"{20 * scale:.4f}", "ocltune_peak_gflops": f"{100 * scale:.4f}",
               "ocltune_copy_spread": "0.01", "ocltune_peak_spread": "0.01", "ocltune_version": "0.1.0",
               "ocltune_clblast_version": "1.5.3", "ocltune_shapes": "quick"}
    rows = []
    for i, shape in enumerate(SHAPES):
        flops = 2.0 * 256 ** 3 * (i + 1)
        for variant, base in (("tuned", 40.0), ("default", 10.0), ("clblast", 20.0)):
            name = f"gemm/fp32/{shape}/{variant}"
            gflops = base * (i + 1) * scale * (1 + rng.gauss(0, noise)) * (slow or {}).get(name, 1.0)
            t_ns = flops / gflops
            rows.append({"name": name, "run_name": name, "run_type": "iteration", "repetitions": 1,
                         "iterations": 100, "real_time": t_ns / 1e3, "cpu_time": 1.0, "time_unit": "us",
                         "label": "KWG=16,MWG=32" if variant != "clblast" else "clblast::Gemm",
                         "GFLOP/s": gflops, "GB/s": 3 * 4 * 256 ** 2 / t_ns, "peak_frac": gflops / 100,
                         "roofline_frac": gflops / 100, "median_us": t_ns / 1e3, "spread": 0.01,
                         "flops": flops, "bytes": 3 * 4 * 256 ** 2, "memory_bound": 0})
    rows.append({"name": "gemm/fp32/batch=1,k=1,layout=NN,m=1,n=1/tuned", "run_name":
                 "gemm/fp32/batch=1,k=1,layout=NN,m=1,n=1/tuned", "run_type": "iteration", "error_occurred": True,
                 "error_message": "not tuned on this device: no row in the database's best table"})
    return {"context": context, "benchmarks": rows}


def write(path, data):
    """Writes JSON to `path` and returns the path."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f)
    return path
