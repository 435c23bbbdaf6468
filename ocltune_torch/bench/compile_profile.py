"""Where a compiled model's step spends device time, against the eager step: torch.profiler's
ProfilerActivity.OCL (every kernel with its OpenCL event time, linked to the op that launched it).

Runs one model (models.py's definitions and inputs) eagerly and through torch.compile(backend=
"ocltune") on one ocl device, profiles --reps steps of each after --warmup, and prints per op (aten::
and ocltune:: ops) the calls and the device time per step of both, largest first, then the kernels'
total. Use it to see what a fusion pass bought or cost, e.g. with OCLTUNE_COMPILE_CONV_EPILOGUES=1:

  python compile_profile.py --model resnet50 --mode inference --batch 32 --ocl ocl:1
"""

import argparse
import collections
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ocltune_torch  # noqa: E402,F401  (registers the ocl device)

KERNEL = torch.autograd.DeviceType.PrivateUse1


def device_us(event):
    """An op's self device time in us (the attribute's name changed with PyTorch's device-generic profiler)."""
    return getattr(event, "self_device_time_total", None) or getattr(event, "self_cuda_time_total", 0.0)


def make(name, batch, size, seq, layers):
    import torchvision

    g = torch.Generator().manual_seed(0)
    if name == "encoder":
        layer = torch.nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.1, activation="gelu", batch_first=True)
        model = torch.nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
        return model, torch.randn(batch, seq, 768, generator=g)
    return getattr(torchvision.models, name)(num_classes=1000), torch.randn(batch, 3, size, size, generator=g)


def profile_steps(step, device, warmup, reps):
    """Per op: [calls, device us] summed over `reps` profiled steps, after `warmup` unprofiled ones."""
    for _ in range(warmup):
        step()
    torch.ocl.synchronize(device)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.OCL]) as prof:
        for _ in range(reps):
            step()
        torch.ocl.synchronize(device)
    per_op = collections.defaultdict(lambda: [0, 0.0])
    for e in prof.key_averages():
        if e.key.startswith(("aten::", "ocltune::")) and device_us(e) > 0:
            per_op[e.key][0] += e.count
            per_op[e.key][1] += device_us(e)
    kernels = sum(k.time_range.elapsed_us() for k in prof.events() if k.device_type == KERNEL)
    return per_op, kernels


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--mode", choices=["inference", "training"], default="inference")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--seq", type=int, default=512)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--ocl", default="ocl:0")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--top", type=int, default=20)
    args = parser.parse_args()

    device = torch.device(args.ocl)
    torch.manual_seed(0)
    model, x = make(args.model, args.batch, args.size, args.seq, args.layers)
    model, x = model.to(device), x.to(device)
    results = {}
    for name, runner in (("eager", model), ("compiled", torch.compile(model, backend="ocltune"))):
        if args.mode == "inference":
            model.eval()

            def step(runner=runner):
                with torch.no_grad():
                    runner(x)
        else:
            model.train()

            def step(runner=runner):
                runner(x).float().square().mean().backward()
        results[name] = profile_steps(step, device, args.warmup, args.reps)

    (eager, eager_kernels), (compiled, compiled_kernels) = results["eager"], results["compiled"]
    reps = args.reps
    print(f"{args.model} {args.mode} batch {args.batch} on {torch.ocl.get_device_name(device)}: device ms per step")
    print(f"{'op':48} {'eager calls':>11} {'eager ms':>9} {'compiled calls':>14} {'compiled ms':>11}")
    ops = sorted(set(eager) | set(compiled), key=lambda k: -max(eager.get(k, [0, 0])[1], compiled.get(k, [0, 0])[1]))
    for op in ops[:args.top]:
        e, c = eager.get(op, [0, 0.0]), compiled.get(op, [0, 0.0])
        print(f"{op[:48]:48} {e[0] / reps:11.0f} {e[1] / reps / 1e3:9.3f} {c[0] / reps:14.0f} {c[1] / reps / 1e3:11.3f}")
    print(f"{'every kernel':48} {'':11} {eager_kernels / reps / 1e3:9.3f} {'':14} {compiled_kernels / reps / 1e3:11.3f}")


if __name__ == "__main__":
    main()
