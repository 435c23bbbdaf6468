"""The first training step of a model in a new process, with cold and warm caches: seconds per step.

    python ocltune_torch/bench/first_step.py --models resnet50,resnet18 --batch 2 --size 64      (PoCL)
    python ocltune_torch/bench/first_step.py --models resnet50 --batch 32 --size 224             (on the H200)

Each measurement runs in a fresh child process, so nothing built in memory survives: the child imports
torch and ocltune_torch, moves the model to the device, and times each of `--steps` training steps
(forward, loss, backward, SGD step, synchronised). Three cache states, each run `--runs` times with
the states alternating, so drifting load on a shared machine spreads over all of them:

  cold      every cache empty: HOME, XDG_CACHE_HOME, ocltune's binary cache, PoCL's kernel cache and
            NVIDIA's compute cache point into a new temporary folder (a fresh machine);
  binaries  the same, but ocltune's binary cache is the one a cold run left behind (the issue's "binary
            cache of an earlier process carried over" to a fresh machine);
  warm      every cache as a cold run left it (a second run on the same machine);
  own       the caller's caches as they are (not in the default --states).

It prints, per model and state, the medians of: the first step, the second step, the later steps
(the steady step), the import and the move to the device; and where the first step's time went as
the runtime counts it (`ocltune_torch.startup_stats()`: resolutions of new problems, their
first-dispatch checks, program builds from source and binary loads, the backend's plain programs).
Strict mode (OCLTUNE_TORCH_STRICT=1) and fp32 matmuls, as models.py. `--json FILE` keeps every run.
`--log-builds` also lists each plain program a child built and its build time, slowest first (on an
H100 a cold resnet50 step spent 18 s on six of them, 3 s each, where PoCL takes 0.1-0.9 s).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

STATES = ("cold", "binaries", "warm", "own")


def child(args):
    """One process: import, move, `--steps` timed steps; one JSON line on stdout."""
    started = time.perf_counter()
    import torch
    import torch.nn.functional as F

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    import ocltune_torch
    import torchvision

    imported = time.perf_counter()
    torch.set_float32_matmul_precision("highest")
    device = torch.device(args.ocl)
    torch.manual_seed(0)
    model = getattr(torchvision.models, args.child)(num_classes=1000)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(args.batch, 3, args.size, args.size, generator=g)
    target = torch.randint(0, 1000, (args.batch,), generator=g)
    moving = time.perf_counter()
    model = model.to(device)
    x, target = x.to(device), target.to(device)
    torch.ocl.synchronize(device)
    moved = time.perf_counter()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    model.train()
    if args.progress > 0:
        start_progress(args.progress, moved)
    steps = []
    for _ in range(args.steps):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), target).backward()
        opt.step()
        torch.ocl.synchronize(device)
        steps.append(time.perf_counter() - start)
    print(json.dumps(dict(import_s=imported - started, to_device_s=moved - moving, steps_s=steps,
                          startup=ocltune_torch.startup_stats())), flush=True)


def start_progress(every_s, since):
    """Prints the cold path's counters every `every_s` seconds, so that a child the parent stops still
    says where its first step went (the parent reports the last such line)."""
    import threading

    import ocltune_torch

    def report():
        while True:
            time.sleep(every_s)
            print(json.dumps(dict(progress_s=time.perf_counter() - since, startup=ocltune_torch.startup_stats())),
                  flush=True)

    threading.Thread(target=report, daemon=True).start()


def run_child(args, model, home=None, binaries=None):
    """A child with its caches under `home` and ocltune's binary cache in `binaries` (None: the caller's)."""
    env = dict(os.environ, OCLTUNE_TORCH_STRICT="1")
    if args.log_builds:
        env["OCLTUNE_TORCH_LOG_BUILDS"] = "1"
    if home is not None:
        cache = os.path.join(home, ".cache")
        env.update(HOME=home, XDG_CACHE_HOME=cache, OCLTUNE_BINARY_CACHE=binaries,
                   POCL_CACHE_DIR=os.path.join(cache, "pocl"), CUDA_CACHE_PATH=os.path.join(home, ".nv", "ComputeCache"))
        env.pop("OCLTUNE_DB", None)  # the user database of a fresh machine: none (HOME is new)
    command = [sys.executable, os.path.abspath(__file__), "--child", model] + child_flags(args)
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=args.timeout)
    except subprocess.TimeoutExpired as e:
        # Where the time went until the child was stopped: its last progress line.
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        lines = [json.loads(line) for line in out.splitlines() if line.startswith('{"progress_s"')]
        last = lines[-1] if lines else None
        print(f"first_step.py: the {model} child did not finish within {args.timeout:.0f} s"
              + (f"; after {last['progress_s']:.0f} s of steps: " + format_startup(last["startup"]) if last else ""),
              flush=True)
        return None
    if done.returncode != 0:
        sys.exit(f"first_step.py: the {model} child exited {done.returncode}:\n{done.stdout[-2000:]}\n"
                 f"{done.stderr[-4000:]}")
    result = json.loads([line for line in done.stdout.splitlines() if line.startswith('{"import_s"')][-1])
    print(f"  {model}: first step {result['steps_s'][0]:.2f} s; " + format_startup(result["startup"]), flush=True)
    if args.log_builds:  # the plain programs the child built, slowest first
        builds = [line for line in done.stderr.splitlines() if line.startswith("ocltune_torch: plain program ")]
        seconds = lambda line: float(line.split(" built in ")[1].split(" ms")[0])  # noqa: E731
        for line in sorted(builds, key=seconds, reverse=True):
            print("    " + line.removeprefix("ocltune_torch: "), flush=True)
    return result


def format_startup(startup):
    return ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in startup.items())


def child_flags(args):
    return ["--ocl", args.ocl, "--batch", str(args.batch), "--size", str(args.size), "--steps", str(args.steps),
            "--progress", str(args.progress)]


def keep(runs, result):
    """Adds a finished child's figures (None: stopped by --timeout, reported where it stopped)."""
    if result is not None:
        runs.append(result)


def median(values):
    return statistics.median(values) if values else float("nan")


def summary(runs):
    """Medians over runs of one model and state (runs stopped by --timeout are not among them)."""
    if not runs:
        return dict(first_s=float("nan"), second_s=float("nan"), steady_s=float("nan"), import_s=float("nan"),
                    to_device_s=float("nan"), startup={})
    out = dict(first_s=median([r["steps_s"][0] for r in runs]),
               second_s=median([r["steps_s"][1] for r in runs if len(r["steps_s"]) > 1]),
               steady_s=median([median(r["steps_s"][2:]) for r in runs if len(r["steps_s"]) > 2]),
               import_s=median([r["import_s"] for r in runs]), to_device_s=median([r["to_device_s"] for r in runs]))
    out["startup"] = {key: median([r["startup"][key] for r in runs]) for key in runs[0]["startup"]}
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="resnet50,resnet18", help="comma-separated torchvision models")
    parser.add_argument("--ocl", default="ocl:0")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--size", type=int, default=64, help="image side")
    parser.add_argument("--steps", type=int, default=5, help="steps per process (the first, the second, steady)")
    parser.add_argument("--runs", type=int, default=3, help="processes per model and state")
    parser.add_argument("--states", default="cold,binaries,warm", help="comma-separated: " + ",".join(STATES))
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per child process")
    parser.add_argument("--progress", type=float, default=30,
                        help="seconds between a child's progress lines (what a child stopped by --timeout reports)")
    parser.add_argument("--json", help="write every run's figures here")
    parser.add_argument("--log-builds", action="store_true",
                        help="print each plain program a child built and its build time (OCLTUNE_TORCH_LOG_BUILDS)")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # the measured process: this model
    args = parser.parse_args()
    if args.child:
        return child(args)
    states = args.states.split(",")
    unknown = set(states) - set(STATES)
    if unknown:
        parser.error(f"unknown states {sorted(unknown)}; choose from {','.join(STATES)}")
    if args.steps < 1 or args.runs < 1:
        parser.error("--steps and --runs must be at least 1")

    results = {}
    print(f"{args.batch} x 3 x {args.size} x {args.size}, {args.steps} steps per process, {args.runs} runs per state; "
          "medians in seconds", flush=True)
    for model in args.models.split(","):
        runs = {state: [] for state in states}
        for _ in range(args.runs):
            if "own" in runs:
                keep(runs["own"], run_child(args, model))
            if not set(runs) - {"own"}:
                continue
            # A cold run fills the caches that the other states start from; each round has its own folder.
            root = tempfile.mkdtemp(prefix="first_step_")
            try:
                seed = os.path.join(root, "seed")
                seeded = run_child(args, model, seed, os.path.join(seed, "binaries"))
                if "cold" in runs:
                    keep(runs["cold"], seeded)
                for state in states:
                    if state == "binaries":
                        keep(runs[state], run_child(args, model, os.path.join(root, "fresh"),
                                                    os.path.join(seed, "binaries")))
                        shutil.rmtree(os.path.join(root, "fresh"), ignore_errors=True)
                    elif state == "warm":
                        keep(runs[state], run_child(args, model, seed, os.path.join(seed, "binaries")))
            finally:
                shutil.rmtree(root, ignore_errors=True)
        results[model] = {state: dict(summary(r), runs=r) for state, r in runs.items()}
        print(f"\n{model}: {'state':9} {'first':>8} {'second':>8} {'steady':>8} {'import':>8} {'to dev':>8}")
        for state in states:
            s = results[model][state]
            print(f"{'':{len(model) + 1}} {state:9} {s['first_s']:8.2f} {s['second_s']:8.2f} {s['steady_s']:8.3f} "
                  f"{s['import_s']:8.2f} {s['to_device_s']:8.2f}")
        print(f"{'':{len(model) + 1}} where the first step went (medians, seconds or counts):")
        for state in states:
            st = results[model][state]["startup"]
            print(f"{'':{len(model) + 1}} {state:9} " + format_startup(st))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(command=" ".join(sys.argv), batch=args.batch, size=args.size, steps=args.steps,
                           results=results), f, indent=1)


if __name__ == "__main__":
    main()
