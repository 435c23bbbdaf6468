#!/usr/bin/env bash
# Issue 20's measurement, in one device command on the GPU host (docs/GPU.md): what the default
# `ocltune --ops all` run reaches on the target shapes against the deep reference, both re-timed in
# the same process kind, and the staleness check of the shipped file.
#
#   scripts/gpu/tuning-depth.sh [CHECK_BUDGET]      (needs $OUT, .gpu from scripts/gpu/prepare.sh)
#
# 1. `ocltune --device <gpu> --ops all` on a fresh database, default preset and budget, the shipped
#    rows installed as the system database (what a user with an H200 has: the tuner starts from them).
# 2. `ocltune db check --shapes bench/gpu/targets.json` of that run's database and of the shipped
#    file (the deep reference: rows of deep runs of earlier sessions), one after the other: per target
#    shape the run's figure as a share of the reference's, both timed now. A target the run did not
#    tune is served by the shipped row, and is listed so.
# 3. `ocltune db check` of the whole shipped file, --speed-informational, cut at CHECK_BUDGET
#    (default 90s; 0 skips it): stale rows and changed kernel sources.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
: "${OUT:?OUT must name the results folder (the device tool sets it)}"
check_budget=${1:-90s}
bin=.gpu/bin/ocltune
OCLTUNE="$bin" . scripts/gpu/env.sh >/dev/null
export OCLTUNE_SYSTEM_DB=$PWD/.gpu/system.db
export OCLTUNE_BINARY_CACHE=${OCLTUNE_BINARY_CACHE:-/tmp/tuning-depth-binaries}
gpu=$OCLTUNE_GPU
targets=bench/gpu/targets.json

start=$(date +%s)
"$bin" --device "$gpu" --ops all --db "$OUT/all.db" > "$OUT/ops-all.txt" 2>&1
echo "ops all: rc=$? after $(($(date +%s) - start)) s"
tail -3 "$OUT/ops-all.txt"

"$bin" --json db check --device "$gpu" --shapes "$targets" --speed-informational "$OUT/all.db" > "$OUT/check-run.json" 2> "$OUT/check-run.err"
"$bin" --json db check --device "$gpu" --shapes "$targets" --speed-informational db/shipped/nvidia-h200.jsonl \
  > "$OUT/check-shipped.json" 2> "$OUT/check-shipped.err"
python3 - "$OUT/check-run.json" "$OUT/check-shipped.json" "$targets" <<'PY'
import json, sys
def rows(path):
    try:
        return {(r["op"], r["math"], r["shape_key"]): r for r in json.load(open(path))["rows"]}
    except (OSError, ValueError, KeyError) as e:
        print(f"{path}: no check results ({e})")
        return {}
run, ref = rows(sys.argv[1]), rows(sys.argv[2])
print(f"{'op':12} {'math':5} {'shape key':64} {'run now':>16} {'reference now':>16} {'run/ref':>8}")
worst = None
for key in sorted(set(run) | set(ref)):
    r, d = run.get(key), ref.get(key)
    unit = (r or d).get("unit", "")
    rn = r.get("now") if r else None
    dn = d.get("now") if d else None
    ratio = rn / dn if rn and dn else None
    if ratio is not None:
        worst = ratio if worst is None else min(worst, ratio)
    note = "" if r else "  (not tuned by the run: the shipped row serves it)"
    fmt = lambda v: f"{v:.1f} {unit}" if v else "-"
    print(f"{key[0]:12} {key[1]:5} {key[2][:64]:64} {fmt(rn):>16} {fmt(dn):>16} {f'{ratio:.2f}' if ratio else '-':>8}{note}")
print(f"targets in the run's database: {len(run)}, with a reference row: {len(ref)}; lowest run/reference: "
      f"{worst:.2f}" if worst is not None else "no target measured on both sides")
PY

if [ "$check_budget" != 0 ]; then
  "$bin" --json db check --device "$gpu" --speed-informational --time-budget "$check_budget" \
    db/shipped/nvidia-h200.jsonl > "$OUT/check-shipped-all.json" 2> "$OUT/check-shipped-all.err"
  python3 - "$OUT/check-shipped-all.json" <<'PY'
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    sys.exit(f"db check of the shipped file: no results ({e})")
rows = j["rows"]
ratios = sorted(r["ratio"] for r in rows if r.get("ratio"))
print(f"db check of the shipped file: {len(rows)} rows checked, {len(j['unchecked'])} not reached, "
      f"{j['source_changed']} with a changed kernel source")
if ratios:
    print(f"  now / recorded: min {ratios[0]:.2f}, median {ratios[len(ratios) // 2]:.2f}, max {ratios[-1]:.2f}")
for r in rows:
    if r.get("ratio") is not None and r["ratio"] < 0.8 or r["verdict"] not in ("ok", "slower"):
        print(f"  {r['op']:10} {r['shape_key'][:70]:70} {r['verdict']:8} {r.get('ratio') or 0:.2f}x {r['detail'][:80]}")
PY
fi
# The device tool brings back 8 files of $OUT: the logs and check results go in one archive.
(cd "$OUT" && tar -czf tuning-depth.tar.gz ops-all.txt check-*.json check-*.err && rm -f ops-all.txt check-*.json check-*.err)
echo "tuning-depth: done after $(($(date +%s) - start)) s; logs and db check results in \$OUT/tuning-depth.tar.gz"
