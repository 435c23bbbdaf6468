"""Lists the convolution problems a torchvision model dispatches in one step at a batch, without a
device: the model runs on PyTorch's meta device (shapes only, no arithmetic), a hook notes every
nn.Conv2d call, and each becomes the problems of its directions (forward; in training also the
weight gradient, and the input gradient where the input needs one: not the first layer's).

    python ocltune_torch/bench/model_shapes.py --models resnet18 --modes training,inference \
        --batch 64 -o shapes.json
    python ocltune_torch/bench/model_shapes.py --models resnet50 --math tf32 -o tf32.json

Writes the form `torch-backend.sh record` writes (a JSON list of problems with their calls per step),
which select_shapes.py and `ocltune --shapes` read; the recorded file of a device run has the GEMMs
and the lookup level too, this one the convolutions only. A batch the recorded runs did not use
(resnet18 at 64) costs a device run here, so it is worth listing without one."""

import argparse
import json
import sys

import torch


def conv_problems(model, batch, size, training, math="exact"):
    """The conv2d problems of one step, each with its calls per step, in first-call order."""
    counts = {}

    def hook(module, inputs, output):
        x = inputs[0]
        n, c, h, w = x.shape
        problem = {"op": "conv2d", "act": "none", "bias": module.bias is not None, "c": c,
                   "dil_h": module.dilation[0], "dil_w": module.dilation[1], "groups": module.groups, "h": h,
                   "k": module.out_channels, "n": n, "pad_h": module.padding[0], "pad_w": module.padding[1],
                   "r": module.kernel_size[0], "s": module.kernel_size[1], "stride_h": module.stride[0],
                   "stride_w": module.stride[1], "w": w}
        dirs = ["fwd"]
        if training:
            dirs.append("bwd_weight")
            if x.requires_grad:
                dirs.append("bwd_data")
        if math != "exact":
            problem["math"] = math  # the key of a tf32 row (docs/decisions/0048)
        for d in dirs:
            key = json.dumps(dict(problem, dir=d), sort_keys=True)
            counts[key] = counts.get(key, 0) + 1

    for module in model.modules():
        if isinstance(module, torch.nn.Conv2d):
            if not isinstance(module.padding, tuple):
                raise SystemExit(f"model_shapes: padding {module.padding!r} is not explicit")
            module.register_forward_hook(hook)
    model.train(training)
    x = torch.empty(batch, 3, size, size, device="meta")
    with torch.set_grad_enabled(training):
        model(x)
    return [dict(json.loads(key), recorded={"calls": calls}) for key, calls in counts.items()]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="resnet50", help="torchvision models, comma-separated")
    parser.add_argument("--modes", default="training,inference", help="training, inference or both")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--size", type=int, default=224, help="image height and width")
    parser.add_argument("--math", choices=["exact", "tf32"], default="exact",
                        help="the problems' math mode: tf32 for the rows PyTorch's default TF32 convolutions take")
    parser.add_argument("-o", "--output", required=True, help="file to write (JSON list, `ocltune --shapes`)")
    args = parser.parse_args(argv)
    import torchvision

    merged = {}  # problem -> calls, over every model and mode
    for name in filter(None, args.models.split(",")):
        try:
            model = getattr(torchvision.models, name)(num_classes=1000).to("meta")
        except AttributeError:
            sys.exit(f"model_shapes: torchvision has no model {name!r}")
        for mode in filter(None, args.modes.split(",")):
            if mode not in ("training", "inference"):
                sys.exit(f"model_shapes: mode {mode!r} is not training or inference")
            for p in conv_problems(model, args.batch, args.size, mode == "training", args.math):
                key = json.dumps({k: v for k, v in p.items() if k != "recorded"}, sort_keys=True)
                merged[key] = merged.get(key, 0) + p["recorded"]["calls"]
    problems = [dict(json.loads(key), recorded={"calls": calls}) for key, calls in merged.items()]
    with open(args.output, "w") as f:
        json.dump(problems, f, indent=1)
    print(f"{args.output}: {len(problems)} conv2d problems")
    return 0


if __name__ == "__main__":
    sys.exit(main())
