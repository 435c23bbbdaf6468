"""Per-op time of one model step on any device: which aten ops the step spends its time in.

models.py --breakdown N uses it on both devices of a comparison. Every aten op the step dispatches
(forward, backward and optimiser, below autograd) runs with the device synchronised before and after
it, so its figure is the op's own host + device time; the sum over ops is larger than an
unsynchronised step by the synchronisation round trips, and the step time minus that sum is what is
spent outside aten ops (Python, autograd bookkeeping).
"""

import collections
import time

import torch
from torch.utils._python_dispatch import TorchDispatchMode


def synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "ocl":
        torch.ocl.synchronize(device)


def _shape_key(args):
    """The shapes of the tensor arguments, e.g. '32x64x56x56,64x64x3x3': an op's problem, roughly."""
    shapes = []
    for a in args:
        if isinstance(a, torch.Tensor):
            shapes.append("x".join(str(s) for s in a.shape) or "scalar")
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], torch.Tensor):
            shapes.append(f"[{len(a)} tensors]")
    return ",".join(shapes)


def _name(func):
    return str(func.overloadpacket.__name__) if hasattr(func, "overloadpacket") else str(func)


class OpTimer(TorchDispatchMode):
    """Times every aten op dispatched inside `with OpTimer(device) as t:`, or only the ops named in
    `only` (the others run unsynchronised, so the device keeps its pace between the timed ones);
    t.by_op and t.by_problem map an op name (and its argument shapes) to [calls, seconds]."""

    def __init__(self, device, only=None):
        super().__init__()
        self.device = device
        self.only = set(only) if only else None
        self.by_op = collections.defaultdict(lambda: [0, 0.0])
        self.by_problem = collections.defaultdict(lambda: [0, 0.0])

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if self.only is not None and _name(func) not in self.only:
            return func(*args, **(kwargs or {}))
        synchronize(self.device)
        start = time.perf_counter()
        out = func(*args, **(kwargs or {}))
        synchronize(self.device)
        seconds = time.perf_counter() - start
        name = _name(func)
        for table, key in ((self.by_op, name), (self.by_problem, (name, _shape_key(args)))):
            table[key][0] += 1
            table[key][1] += seconds
        return out


def breakdown(step, device, only=None):
    """Runs step() once under an OpTimer (timing the ops named in `only`, or all); returns {"op":
    {name: [calls, ms]}, "problem": [[name, shapes, calls, ms], ...], "step_ms": the step's wall time}."""
    synchronize(device)
    start = time.perf_counter()
    with OpTimer(device, only) as timer:
        step()
    synchronize(device)
    step_ms = (time.perf_counter() - start) * 1e3
    return dict(op={k: [n, s * 1e3] for k, (n, s) in timer.by_op.items()},
                problem=[[k[0], k[1], n, s * 1e3] for k, (n, s) in timer.by_problem.items()],
                step_ms=step_ms)


def print_comparison(base_name, base, ocl, top):
    """The `top` ops by ocl time, each with the baseline's time for the same op and the ratio, then
    the `top` costliest (op, shapes) problems on ocl."""
    total_ocl = sum(ms for _, ms in ocl["op"].values())
    total_base = sum(ms for _, ms in base["op"].values())
    print(f"  per-op time, each op synchronised: sum over ops {base_name} {total_base:.2f} ms, "
          f"ocl {total_ocl:.2f} ms (synchronised steps: {base['step_ms']:.2f} / {ocl['step_ms']:.2f} ms)")
    print(f"  {'op':36} {'calls':>6} {base_name + ' ms':>10} {'ocl ms':>10} {'ratio':>7} {'ocl share':>9}")
    for name, (calls, ms) in sorted(ocl["op"].items(), key=lambda kv: -kv[1][1])[:top]:
        base_ms = base["op"].get(name, [0, 0.0])[1]
        ratio = f"{base_ms / ms:7.3f}" if ms > 0 and base_ms > 0 else "      -"
        print(f"  {name:36} {calls:6d} {base_ms:10.3f} {ms:10.3f} {ratio} {100 * ms / total_ocl:8.1f}%")
    base_problems = {(p[0], p[1]): p[3] for p in base["problem"]}
    print(f"  costliest problems on ocl: {'op':28} {'shapes':44} {'calls':>6} {base_name + ' ms':>10} {'ocl ms':>10}")
    for name, shapes, calls, ms in sorted(ocl["problem"], key=lambda p: -p[3])[:top]:
        print(f"  {'':27}{name:28} {shapes[:44]:44} {calls:6d} {base_problems.get((name, shapes), 0.0):10.3f} {ms:10.3f}")
