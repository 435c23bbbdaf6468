"""Soak: many training steps of one model on ocl, checking that memory stays flat after warm-up.

    python ocltune_torch/bench/soak.py --model resnet18 --steps 1000            (issue 41's long run)
    python ocltune_torch/bench/soak.py --model resnet18 --steps 60 --warmup 10  (what the suite runs)

Every `--every` steps (synchronised) it samples the caching allocator (memory_allocated,
memory_reserved, device buffers created) and the process's resident memory, which on a CPU device
also holds the device buffers and always holds the runtime's caches (programs, decisions, plain
kernels). After `--warmup` steps none may grow: allocated and reserved not at all, device buffers
not at all (a steady step takes every block from the cache), resident memory by at most
`--rss-slack` MiB (the interpreter's own allocations move a little). Prints one line per sample and
a verdict; exits 1 on growth. Models: torchvision's (`--model resnet18`, `mobilenet_v2`, ...) with
SGD and momentum, or `encoder` (a 2-layer transformer encoder with AdamW).
"""

import argparse
import os
import sys

import torch


def resident_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def build(name, batch, size, device):
    torch.manual_seed(0)
    if name == "encoder":
        layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.1, batch_first=True)
        model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, 2), torch.nn.Flatten(), torch.nn.LazyLinear(10))
        x = torch.randn(batch, 16, 64)
        model(x)  # materialises the lazy layer on the CPU
        optimizer_of = lambda params: torch.optim.AdamW(params, lr=1e-4)  # noqa: E731
    else:
        import torchvision

        model = getattr(torchvision.models, name)(num_classes=10)
        x = torch.randn(batch, 3, size, size)
        optimizer_of = lambda params: torch.optim.SGD(params, lr=1e-3, momentum=0.9)  # noqa: E731
    model = model.to(device)
    return model, optimizer_of(model.parameters()), x.to(device), torch.randint(0, 10, (batch,)).to(device)


def sample(device):
    torch.ocl.synchronize(device)
    stats = torch.ocl.memory_stats(device)
    return {
        "allocated": torch.ocl.memory_allocated(device),
        "reserved": torch.ocl.memory_reserved(device),
        "device_buffers": stats["num_device_alloc"],
        "rss_mib": resident_mib(),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="resnet18")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--rss-slack", type=float, default=64.0)
    parser.add_argument("--device", default="ocl:0")
    args = parser.parse_args(argv)

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    import ocltune_torch  # noqa: F401  (registers the device)

    device = torch.device(args.device)
    model, optimizer, x, target = build(args.model, args.batch, args.size, device)
    after_warmup = None
    samples = []
    for step in range(1, args.steps + 1):
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), target)
        loss.backward()
        optimizer.step()
        if step == args.warmup:
            after_warmup = sample(device)
        if step > args.warmup and (step - args.warmup) % args.every == 0 or step == args.steps:
            s = sample(device)
            samples.append(s)
            print(f"step {step}: loss {loss.item():.4f} allocated {s['allocated'] / 2**20:.1f} MiB reserved "
                  f"{s['reserved'] / 2**20:.1f} MiB device buffers {s['device_buffers']} resident {s['rss_mib']:.0f} MiB",
                  flush=True)
    assert after_warmup is not None, "--steps must exceed --warmup"
    problems = []
    for key in ("allocated", "reserved", "device_buffers"):
        peak = max(s[key] for s in samples)
        if peak > after_warmup[key]:
            problems.append(f"{key} grew from {after_warmup[key]} after warm-up to {peak}")
    rss_growth = max(s["rss_mib"] for s in samples) - after_warmup["rss_mib"]
    if rss_growth > args.rss_slack:
        problems.append(f"resident memory grew by {rss_growth:.0f} MiB (allowed {args.rss_slack:.0f})")
    print(f"{args.model}: {args.steps} steps, {args.warmup} of warm-up; after it allocated "
          f"{after_warmup['allocated'] / 2**20:.1f} MiB, reserved {after_warmup['reserved'] / 2**20:.1f} MiB, "
          f"{after_warmup['device_buffers']} device buffers; resident memory moved {rss_growth:+.0f} MiB")
    print("flat" if not problems else "GROWTH: " + "; ".join(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
