#!/usr/bin/env bash
# Re-tunes the problems of db/shipped/pocl-x86_64.jsonl on PoCL device ${1:-0} and rewrites the file
# with the new rows (their evaluations, figures and the current kernel source hash), for when CI's
# ShippedDatabases.PoclRowsHoldOnTheTestDevice fails on a changed kernel source (decision 0037).
#   scripts/retune-pocl-rows.sh [DEVICE] [OCLTUNE]        (OCLTUNE default: build/ocltune)
# Run it on an idle machine: the figures become the file's recorded figures.
set -euo pipefail
device=${1:-0}
ocltune=${2:-build/ocltune}
file=db/shipped/pocl-x86_64.jsonl
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$file" "$work/shapes.json" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
json.dump([r["shape"] for r in rows if r.get("table") == "best"], open(sys.argv[2], "w"))
PY
ops=$(python3 -c 'import json,sys; print(",".join(sorted({s["op"] for s in json.load(open(sys.argv[1]))})))' "$work/shapes.json")
"$ocltune" --device "$device" --ops "$ops" --shapes "$work/shapes.json" --db "$work/tuned.db" -q
"$ocltune" db export --db "$work/tuned.db" --best-only -o "$work/rows.jsonl"
# Each new row verified and re-timed at once; PoCL's spread between two timings reaches 34%.
"$ocltune" db check --device "$device" --max-loss 0.5 --fail-on-source-change "$work/rows.jsonl"
cp "$work/rows.jsonl" "$file"
echo "$file rewritten; review it with git diff and commit it"
