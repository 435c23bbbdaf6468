"""Groups the conv2d rows of a tuned-rows file by the model (and batch) that dispatches them, for
`ocltune db holdout --groups` (issue 39's held-out prediction: leave one model's rows out, predict
them from the rest):

    python ocltune_torch/bench/holdout_groups.py db/shipped/nvidia-h200.jsonl \
        --models resnet50:32,resnet18:64,mobilenet_v2:32,resnet50:1,mobilenet_v2:1,vgg16:1 -o groups.json

A model's convolutions come from model_shapes.py (the meta device: no arithmetic, no GPU), in every
direction of training and inference; a row belongs to a group when its shape is one of them, bias
and activation aside (the lookup treats those as the same convolution). A row two models share (a
3x3 layer of resnet18 and resnet50 at the same batch) is held out with either, as leaving one model
out must. Rows of no group (and other ops) are never held out; the script says how many."""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model_shapes import conv_problems  # noqa: E402

IGNORED = ("act", "bias", "math", "recorded", "op")


def signature(shape):
    return tuple(sorted((k, v) for k, v in shape.items() if k not in IGNORED))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rows", help="tuned-rows file (.jsonl)")
    parser.add_argument("--models", required=True, help="model:batch pairs, comma-separated")
    parser.add_argument("--size", type=int, default=224, help="image height and width")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    import torchvision

    rows = []
    with open(args.rows) as f:
        for line in f:
            row = json.loads(line)
            if row.get("table") == "best" and row.get("op") == "conv2d":
                rows.append(row)
    groups, grouped = {}, set()
    for item in filter(None, args.models.split(",")):
        name, _, batch = item.partition(":")
        if not batch.isdigit():
            sys.exit(f"holdout_groups: {item!r} is not model:batch")
        model = getattr(torchvision.models, name)(num_classes=1000).to("meta")
        wanted = set()
        for training in (True, False):
            wanted |= {signature(p) for p in conv_problems(model, int(batch), args.size, training)}
        members = [r for r in rows if signature(r["shape"]) in wanted]
        groups[f"{name} b{batch}"] = [{k: r[k] for k in ("op", "dtype", "math", "shape_key")} for r in members]
        grouped |= {(r["dtype"], r["math"], r["shape_key"]) for r in members}
        print(f"{name} b{batch}: {len(members)} rows")
    with open(args.output, "w") as f:
        json.dump(groups, f, indent=1)
    print(f"{args.output}: {len(groups)} groups; {len(rows) - len(grouped)} of {len(rows)} conv2d rows in none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
