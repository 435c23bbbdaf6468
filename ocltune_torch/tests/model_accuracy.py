"""How far a network's gradients on ocl are from float64, next to the CPU's float32 ones, with the
network's kinks taken out of the comparison.

A ReLU's derivative jumps at 0 and a max pool's at a tie. At random initialisation and a small batch
some pre-activations lie within float32's rounding of 0 and some pooling windows hold two values within
rounding of each other: every float32 run (ocl's, the CPU's) then takes one side of such a kink and
float64 perhaps the other, and one element's gradient flows where float64's does not. The parameters
upstream of it then differ from float64 by up to a few percent of their largest gradient, in ocl and
in the CPU alike; which run hits a kink is chance (the CPU's own result differs with oneDNN on or off).
A per-parameter error against plain float64 then says which run was lucky, not which computes better.

So each float32 run is also compared with a float64 run that takes the same side of every kink: its
ReLUs keep exactly the elements the float32 run kept, its max pools take the same indices (replayed
through a TorchFunctionMode, in call order). What is left is rounding in smooth ops, where a defect
(a lossy algorithm, a long serial sum, a 16-bit intermediate) shows.

As a script: per parameter, ocl's and the CPU's error against plain float64 and against their
kink-replayed float64, worst ratios first, and the kinks of each run:
    PYTHONPATH=. python ocltune_torch/tests/model_accuracy.py densenet121 --batch 2 --size 64
"""

import argparse
import copy
import inspect

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

_POOL_SIGNATURE = inspect.signature(
    lambda input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False: None
)


def _is_relu(func):
    return getattr(func, "__name__", "") in ("relu", "relu_")


def _is_max_pool2d(func):
    return getattr(func, "__name__", "") in ("max_pool2d", "_max_pool2d", "max_pool2d_with_indices")


def _pool_arguments(args, kwargs):
    bound = _POOL_SIGNATURE.bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.arguments


class RecordKinks(TorchFunctionMode):
    """Records, in call order, which elements each ReLU kept and which index each max pool took."""

    def __init__(self):
        super().__init__()
        self.kinks = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _is_relu(func):
            out = func(*args, **kwargs)
            self.kinks.append(("relu", (out > 0).cpu()))
            return out
        if _is_max_pool2d(func):
            a = _pool_arguments(args, kwargs)
            out, indices = F.max_pool2d(a["input"], a["kernel_size"], a["stride"], a["padding"], a["dilation"],
                                        ceil_mode=a["ceil_mode"], return_indices=True)
            self.kinks.append(("max_pool2d", indices.cpu()))
            return (out, indices) if a["return_indices"] else out
        return func(*args, **kwargs)


class ReplayKinks(TorchFunctionMode):
    """Runs ReLUs as a product with the recorded mask and max pools as a gather at the recorded indices
    (differentiable: the gradient goes exactly where the recorded run's went)."""

    def __init__(self, kinks):
        super().__init__()
        self.kinks = list(kinks)
        self.next = 0

    def _take(self, kind, shape):
        recorded_kind, value = self.kinks[self.next]
        self.next += 1
        assert recorded_kind == kind and tuple(value.shape) == tuple(shape), "the replayed run calls other ops"
        return value

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _is_relu(func):
            x = args[0] if args else kwargs["input"]
            inplace = func.__name__ == "relu_" or kwargs.get("inplace", False) or (len(args) > 1 and args[1])
            mask = self._take("relu", x.shape).to(device=x.device, dtype=x.dtype)
            return x.mul_(mask) if inplace else x * mask
        if _is_max_pool2d(func):
            a = _pool_arguments(args, kwargs)
            x = a["input"]
            out_shape = F.max_pool2d(x.detach(), a["kernel_size"], a["stride"], a["padding"], a["dilation"],
                                     ceil_mode=a["ceil_mode"]).shape
            indices = self._take("max_pool2d", out_shape).to(x.device)
            out = x.flatten(-2).gather(-1, indices.flatten(-2)).view(out_shape)
            return (out, indices) if a["return_indices"] else out
        return func(*args, **kwargs)


def _zero_dropout(model):
    # Dropout and stochastic depth (convnext, efficientnet, swin, maxvit) draw different masks in each
    # run; the comparisons need the same network.
    from torchvision.ops import StochasticDepth

    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
        elif isinstance(m, StochasticDepth):
            m.p = 0.0
    return model


def _step(model, x, target, mode=None):
    """One forward and backward of cross entropy; the parameters' gradients (on the CPU, float64)."""
    model.zero_grad(set_to_none=True)
    if mode is None:
        out = model(x)
    else:
        with mode:
            out = model(x)
    if isinstance(out, tuple):
        out = out[0]
    F.cross_entropy(out, target).backward()
    return [None if p.grad is None else p.grad.detach().cpu().double() for p in model.parameters()]


def gradient_errors(make_model, x, target, device):
    """Per parameter (name, ocl error, CPU error, ocl error with its kinks, CPU error with its kinks),
    each the largest elementwise difference from the float64 gradient over the parameter's largest
    float64 gradient, floored at 1e-3 of the network's largest; and the kinks where ocl and the CPU
    took another side than float64 (counts per kind). The same weights and input everywhere."""
    torch.manual_seed(0)
    base = _zero_dropout(make_model())
    names = [name for name, _ in base.named_parameters()]

    ocl_record = RecordKinks()
    ocl = _step(copy.deepcopy(base).to(device), x.to(device), target.to(device), ocl_record)
    cpu_record = RecordKinks()
    cpu = _step(copy.deepcopy(base), x, target, cpu_record)
    exact_record = RecordKinks()
    exact = _step(copy.deepcopy(base).double(), x.double(), target, exact_record)
    exact_as_ocl = _step(copy.deepcopy(base).double(), x.double(), target, ReplayKinks(ocl_record.kinks))
    exact_as_cpu = _step(copy.deepcopy(base).double(), x.double(), target, ReplayKinks(cpu_record.kinks))

    largest = max(g.abs().max().item() for g in exact if g is not None)
    rows = []
    for name, g_ocl, g_cpu, g64, g64_ocl, g64_cpu in zip(names, ocl, cpu, exact, exact_as_ocl, exact_as_cpu):
        if g64 is None:
            continue

        def error(g, reference):
            scale = max(reference.abs().max().item(), 1e-3 * largest)
            return (g - reference).abs().max().item() / scale

        rows.append((name, error(g_ocl, g64), error(g_cpu, g64), error(g_ocl, g64_ocl), error(g_cpu, g64_cpu)))

    def kink_differences(record):
        counts = {}
        for (kind, ours), (_, theirs) in zip(record.kinks, exact_record.kinks):
            counts[kind] = counts.get(kind, 0) + int((ours != theirs).sum().item())
        return counts

    return rows, {"ocl": kink_differences(ocl_record), "cpu": kink_differences(cpu_record)}


def torchvision_model(arch):
    import torchvision

    kwargs = {"num_classes": 10}
    if arch == "googlenet":
        kwargs.update(aux_logits=False, init_weights=True)
    return lambda: getattr(torchvision.models, arch)(**kwargs)


def image_batch(n, size, classes=10):
    g = torch.Generator().manual_seed(1)
    return torch.randn(n, 3, size, size, generator=g), torch.randint(0, classes, (n,), generator=g)


def main():
    import ocltune_torch  # noqa: F401  (registers the device)

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("arch", help="a torchvision model name, e.g. densenet121")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--device", default="ocl:0")
    parser.add_argument("--top", type=int, default=12, help="rows to print, worst ratio first")
    args = parser.parse_args()
    if hasattr(torch.backends.cudnn, "conv"):
        torch.backends.cudnn.conv.fp32_precision = "ieee"  # exact fp32 convolutions, as the suites compare
    x, target = image_batch(args.batch, args.size)
    rows, kinks = gradient_errors(torchvision_model(args.arch), x, target, torch.device(args.device))
    print(f"{args.arch}, batch {args.batch}, {args.size}x{args.size}: kinks taken unlike float64: {kinks}")
    print(f"{'parameter':50s} {'ocl':>9s} {'cpu':>9s} {'ratio':>7s} | kinks replayed: {'ocl':>9s} {'cpu':>9s} {'ratio':>7s}")
    for name, o, c, ok, ck in sorted(rows, key=lambda r: -r[3] / max(r[4], 1e-7))[: args.top]:
        print(f"{name:50s} {o:9.2e} {c:9.2e} {o / max(c, 1e-9):7.1f} | {'':16s}{ok:9.2e} {ck:9.2e} {ok / max(ck, 1e-9):7.1f}")
    worst = max(rows, key=lambda r: r[1] / max(r[2], 1e-7))
    print(f"worst against plain float64: {worst[0]} ocl {worst[1]:.2e} cpu {worst[2]:.2e}")


if __name__ == "__main__":
    main()
