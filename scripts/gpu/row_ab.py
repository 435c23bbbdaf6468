#!/usr/bin/env python3
"""A/B of a parameter change on tuned rows, in one process per shape (docs/GPU.md).

For each problem of a shapes file that has a row in a rows file (db/shipped/*.jsonl), `ocltune eval`
times the row's configuration and the same configuration with --set's values, one after the other
in the same process, and prints both medians and the speed-up. A configuration outside the space
(LWALK on a TN GEMM, a direct convolution's row) is reported as skipped by ocltune.

    python3 scripts/gpu/row_ab.py --bin .gpu/bin/ocltune --device $OCLTUNE_GPU \\
        --rows db/shipped/nvidia-h200.jsonl --shapes bench/gpu/targets-wgrad-encoder.json --set LWALK=1
"""
import argparse
import json
import math
import subprocess
import sys
import tempfile

SKIP_FIELDS = {"op", "recorded"}


def canonical(params):
    return ",".join(f"{k}={params[k]}" for k in sorted(params))


def shape_fields(problem):
    return {k: v for k, v in problem.items() if k not in SKIP_FIELDS}


def load_rows(path):
    rows = []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("table") == "best":
                rows.append(r)
    return rows


def find_row(rows, problem, dtype, math_mode):
    want = shape_fields(problem)
    for r in rows:
        if r["op"] != problem["op"] or r["dtype"] != dtype or r["math"] != math_mode:
            continue
        have = shape_fields(r["shape"])
        if all(have.get(k) == v for k, v in want.items()):
            return r
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="the ocltune executable")
    ap.add_argument("--device", required=True)
    ap.add_argument("--rows", required=True, help="rows file (JSON lines, ocltune db export form)")
    ap.add_argument("--shapes", required=True, help="shapes file (JSON list of problems)")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="the change (repeatable)")
    ap.add_argument("--dtype", default="fp32")
    ap.add_argument("--math", default="exact")
    ap.add_argument("--out", help="write the results as JSON here")
    args = ap.parse_args(argv)
    change = {}
    for item in args.set:
        name, _, value = item.partition("=")
        if not name or not value.lstrip("-").isdigit():
            ap.error(f"--set {item!r}: expected NAME=INTEGER")
        change[name] = int(value)
    if not change:
        ap.error("nothing to change: give --set NAME=VALUE")
    rows = load_rows(args.rows)
    problems = json.load(open(args.shapes))
    results, ratios = [], []
    print(f"{'shape key':78} {'row us':>9} {'changed us':>10} {'speed-up':>8}")
    for problem in problems:
        row = find_row(rows, problem, args.dtype, args.math)
        if row is None:
            print(f"{json.dumps(shape_fields(problem))[:78]:78} no row")
            continue
        before = canonical(row["params"])
        after = canonical({**row["params"], **change})
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            proc = subprocess.run([args.bin, "--device", str(args.device), "eval", "--op", problem["op"], "--shape",
                                   json.dumps(shape_fields(row["shape"])), "--config", before, "--config", after,
                                   "--out", out.name], capture_output=True, text=True)
            try:
                evaluated = {r["params"]: r for r in json.load(open(out.name))["results"]}
            except (OSError, ValueError, KeyError):
                evaluated = {}
        a, b = evaluated.get(before), evaluated.get(after)
        ok = lambda r: r is not None and r.get("status") == "ok"
        entry = {"shape_key": row["shape_key"], "op": row["op"], "before": before, "after": after,
                 "before_ns": a["median_ns"] if ok(a) else None, "after_ns": b["median_ns"] if ok(b) else None,
                 "after_status": b["status"] if b else "skipped", "calls": problem.get("recorded", {}).get("calls")}
        results.append(entry)
        if ok(a) and ok(b):
            ratio = a["median_ns"] / b["median_ns"]
            ratios.append(ratio)
            print(f"{row['shape_key'][:78]:78} {a['median_ns'] / 1e3:9.1f} {b['median_ns'] / 1e3:10.1f} {ratio:8.2f}")
        else:
            why = (proc.stderr.strip().splitlines() or ["?"])[-1][:100]
            print(f"{row['shape_key'][:78]:78} {'-' if not ok(a) else round(a['median_ns'] / 1e3, 1):>9} "
                  f"{entry['after_status']:>10}  {why}")
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"{len(ratios)} pairs: speed-up min {min(ratios):.2f}, geomean {geo:.2f}, max {max(ratios):.2f}")
    if args.out:
        json.dump({"change": change, "results": results}, open(args.out, "w"), indent=1)
    return 0 if ratios else 1


if __name__ == "__main__":
    sys.exit(main())
