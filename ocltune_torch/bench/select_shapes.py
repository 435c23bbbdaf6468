"""Picks the costliest problems of a recorded shapes file (ocltune_torch.record_shapes, or
`scripts/gpu/torch-backend.sh record`) for a tuning run that cannot take them all.

    python ocltune_torch/bench/select_shapes.py SHAPES.json --op conv2d --dirs bwd_data,bwd_weight \
        --batch 32 --top 40 -o costly.json
    python ocltune_torch/bench/select_shapes.py SHAPES.json --dirs bwd_weight --where r=3 --where groups=1 \
        --where c!=3 --batch 32 --top 100 --add -o costly.json

Cost is the problem's arithmetic (2 x multiply-adds) times the calls recorded for it, so a layer a
model runs three times counts three times. Depthwise convolutions (groups == channels) are left out
unless --depthwise: cheap (a few % of a step's arithmetic), their own kernel with a small space. Writes the chosen problems in the same
form (`ocltune --shapes` reads it) and prints them with their GFLOP per step."""

import argparse
import json
import sys


def conv_output(size, pad, kernel, stride, dilation):
    return (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1


def flops(problem):
    """2 x the multiply-adds of one call (every direction of a convolution does the same count)."""
    if problem.get("op") == "conv2d":
        p = conv_output(problem["h"], problem.get("pad_h", 0), problem["r"], problem.get("stride_h", 1),
                        problem.get("dil_h", 1))
        q = conv_output(problem["w"], problem.get("pad_w", 0), problem["s"], problem.get("stride_w", 1),
                        problem.get("dil_w", 1))
        groups = problem.get("groups", 1)
        return 2 * problem["n"] * problem["k"] * (problem["c"] // groups) * problem["r"] * problem["s"] * p * q
    if problem.get("op") == "gemm":
        return 2 * problem["m"] * problem["n"] * problem["k"] * problem.get("batch", 1)
    return 0


def calls(problem):
    return max(1, int(problem.get("recorded", {}).get("calls", 1)))


def shape_key(problem):
    """A problem's shape, dtype and math as one string: the identity of a tuned row's shape."""
    shape = {k: v for k, v in problem.items() if k not in ("recorded", "dtype", "math")}
    return json.dumps([shape, problem.get("dtype", "fp32"), problem.get("math", "exact")], sort_keys=True)


def tuned_shapes(path):
    """The shape keys of the best rows of an exported or shipped rows file (JSON lines)."""
    keys = set()
    try:
        with open(path) as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except ValueError as e:
                    sys.exit(f"select_shapes: {path}:{number}: not JSON: {e}")
                if isinstance(row, dict) and row.get("table") == "best" and isinstance(row.get("shape"), dict):
                    keys.add(shape_key(dict(row["shape"], dtype=row.get("dtype", "fp32"),
                                            math=row.get("math", "exact"))))
    except OSError as e:
        sys.exit(f"select_shapes: cannot read {path}: {e}")
    return keys


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("shapes", help="recorded shapes file (a JSON list of problems)")
    parser.add_argument("--op", default="conv2d", help="op of the problems to keep (conv2d, gemm)")
    parser.add_argument("--dirs", default="", help="conv2d directions to keep, comma-separated (default: all)")
    parser.add_argument("--batch", type=int, default=0, help="keep convolutions of this batch only (0: any)")
    parser.add_argument("--depthwise", action="store_true", help="keep depthwise convolutions too")
    parser.add_argument("--where", action="append", default=[], metavar="FIELD=VALUE",
                        help="keep problems whose FIELD is VALUE (FIELD!=VALUE: is not); repeatable, all must hold")
    parser.add_argument("--untuned-in", metavar="ROWS.jsonl", default="",
                        help="leave out problems that have a row of their exact shape in this exported or shipped "
                             "file (`ocltune db export`, db/shipped/*.jsonl): keep the untuned ones")
    parser.add_argument("--top", type=int, default=40, help="how many problems to keep, costliest first")
    parser.add_argument("-o", "--output", required=True, help="file to write (JSON list, `ocltune --shapes`)")
    parser.add_argument("--add", action="store_true",
                        help="add the chosen problems to the output file's (a problem already there stays once)")
    args = parser.parse_args(argv)
    where = []  # (field, value, equal)
    for condition in args.where:
        equal = "!=" not in condition
        field, sep, value = condition.partition("=" if equal else "!=")
        if not sep or not field:
            sys.exit(f"select_shapes: --where {condition!r} is not FIELD=VALUE or FIELD!=VALUE")
        where.append((field, value.lower(), equal))

    try:
        with open(args.shapes) as f:
            problems = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"select_shapes: cannot read {args.shapes}: {e}")
    if not isinstance(problems, list):
        sys.exit(f"select_shapes: {args.shapes} is not a JSON list of problems")
    dirs = {d for d in args.dirs.split(",") if d}
    tuned = tuned_shapes(args.untuned_in) if args.untuned_in else set()
    chosen = []
    for p in problems:
        if not isinstance(p, dict) or p.get("op") != args.op:
            continue
        if args.op == "conv2d":
            if dirs and p.get("dir", "fwd") not in dirs:
                continue
            if args.batch and p.get("n") != args.batch:
                continue
            if not args.depthwise and p.get("groups", 1) > 1 and p.get("groups") == p.get("c"):
                continue
        if any((json.dumps(p.get(field)).strip('"').lower() == value) != equal for field, value, equal in where):
            continue
        if shape_key(p) in tuned:
            continue
        chosen.append(p)
    chosen.sort(key=lambda p: flops(p) * calls(p), reverse=True)
    chosen = chosen[: args.top]
    written = chosen
    if args.add:
        try:
            with open(args.output) as f:
                before = json.load(f)
        except FileNotFoundError:
            before = []
        except (OSError, ValueError) as e:
            sys.exit(f"select_shapes: cannot add to {args.output}: {e}")
        key = lambda p: json.dumps({k: v for k, v in p.items() if k != "recorded"}, sort_keys=True)  # noqa: E731
        seen = {key(p) for p in before}
        written = before + [p for p in chosen if key(p) not in seen]
    with open(args.output, "w") as f:
        json.dump(written, f, indent=1)
    total = sum(flops(p) * calls(p) for p in chosen)
    print(f"{args.output}: {len(chosen)} problems chosen, {total / 1e9:.1f} GFLOP per step; {len(written)} in the file")
    for p in chosen:
        shape = ",".join(f"{k}={v}" for k, v in p.items() if k not in ("op", "recorded"))
        print(f"  {flops(p) * calls(p) / 1e9:8.2f} GFLOP  {shape}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
