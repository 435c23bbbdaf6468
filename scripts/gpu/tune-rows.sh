#!/usr/bin/env bash
# Tune-and-ship in one device call on the GPU host (docs/GPU.md): tunes a shapes file from the shipped
# rows, exports the best rows and merges them into the shipped file (keeping the faster row of each
# key), while the extension is built at low priority for the next call of the same session.
#
#   scripts/gpu/tune-rows.sh SHAPES.json [BUDGET] [ocltune tune arguments...]   (needs $OUT, .gpu)
#
# SHAPES: `ocltune --shapes` form, e.g. from ocltune_torch/bench/model_shapes.py and select_shapes.py
# --untuned-in db/shipped/nvidia-h200.jsonl. BUDGET: --time-budget (default 400s). In $OUT: tune.db,
# tune.log, rows.jsonl, merged.jsonl (copy it over db/shipped/nvidia-h200.jsonl and commit it) and
# keep.tar.gz with libocltune_torch.so and torch-stamp (unpack it into .gpu/keep/: the next call's
# `torch-backend.sh build` reuses them; one archive, since the device tool returns 8 files). LOCAL=1
# runs the same steps here on device ${OCLTUNE_GPU:-0} (PoCL) with the .gpu of scripts/gpu/prepare.sh,
# without the GPU host's setup and the build, merging into $SHIPPED (default
# db/shipped/pocl-x86_64.jsonl there).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
shapes=${1:?usage: $0 SHAPES.json [BUDGET] [ocltune arguments...]}
budget=${2:-400s}
shift 2 2>/dev/null || shift $#
: "${OUT:?OUT must name the results folder (the device tool sets it)}"
here=$PWD
bin=$here/.gpu/bin/ocltune
if [ -n "${LOCAL:-}" ]; then
  shipped=${SHIPPED:-db/shipped/pocl-x86_64.jsonl}
  export OCLTUNE_GPU=${OCLTUNE_GPU:-0}
else
  shipped=${SHIPPED:-db/shipped/nvidia-h200.jsonl}
  # shellcheck source=scripts/gpu/env.sh
  OCLTUNE=$bin source scripts/gpu/env.sh
fi
export LD_LIBRARY_PATH=$here/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} OCLTUNE_SYSTEM_DB=$here/.gpu/system.db
start=$(date +%s)

if [ -z "${LOCAL:-}" ]; then
  (
    nice -n 19 scripts/gpu/torch-backend.sh build > "$OUT/build.log" 2>&1 &&
      mkdir -p "$OUT/keep" &&
      strip -o "$OUT/keep/libocltune_torch.so" /tmp/ocltune_torch_build/libocltune_torch.so &&
      cp /tmp/ocltune_torch_build/torch-stamp "$OUT/keep/"
  ) &
fi
"$bin" --device "$OCLTUNE_GPU" --shapes "$shapes" --db "$OUT/tune.db" --time-budget "$budget" "$@" > "$OUT/tune.log" 2>&1
echo "tune: rc=$? after $(($(date +%s) - start)) s"
tail -n 40 "$OUT/tune.log"
wait
if [ -z "${LOCAL:-}" ]; then
  tail -n 1 "$OUT/build.log"
  [ -d "$OUT/keep" ] && tar -czf "$OUT/keep.tar.gz" -C "$OUT/keep" . && rm -rf "$OUT/keep"
fi
"$bin" db export --db "$OUT/tune.db" --best-only --min-evaluations 0 -o "$OUT/rows.jsonl" || exit 1
"$bin" db merge "$shipped" "$OUT/rows.jsonl" -o "$OUT/merged.jsonl" --force || exit 1
echo "tune-rows: done after $(($(date +%s) - start)) s; \$OUT/merged.jsonl replaces $shipped"
