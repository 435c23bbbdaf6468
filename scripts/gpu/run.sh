#!/usr/bin/env bash
# Runs one GPU experiment on the lent GPU host (docs/GPU.md): the setup every run shares
# (scripts/gpu/env.sh), then the steps of scripts/gpu/experiments/<name>.json, results under $OUT.
#
#   scripts/gpu/run.sh --list                      experiments, one line each
#   scripts/gpu/run.sh --dry-run NAME [options]    the commands a run would execute (no device needed)
#   scripts/gpu/run.sh NAME [options] [-- ARGS]    run it (NAME or an old alias such as probe48)
#
# Options (scripts/gpu/runner.py --help): --bin DIR (default .gpu/bin), --set KEY=VALUE, --only N,M,
# --limit SECONDS; ARGS after `--` go to every step's main command. Exit 0, 1 setup failure, 2 usage.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

runner=(python3 scripts/gpu/runner.py)
bin=${OCLTUNE_BIN:-.gpu/bin}
offline=0
prev=""
for arg in "$@"; do
  [ "$arg" = "--" ] && break
  case "$arg" in
    --list | --dry-run | -n | --binaries | -h | --help) offline=1 ;;
    --bin=*) bin=${arg#--bin=} ;;
  esac
  [ "$prev" = "--bin" ] && bin=$arg
  prev=$arg
done
# Listing, printing and help need no device: no ICD, no libraries, no device query.
[ "$offline" = 1 ] && exec "${runner[@]}" "$@"

: "${OUT:?OUT must name the results folder (the device tool sets it)}"
[ -x "$bin/ocltune" ] || { echo "run: no $bin/ocltune (scripts/gpu/prepare.sh, then carry .gpu)" >&2; exit 1; }
OCLTUNE="$bin/ocltune" . scripts/gpu/env.sh
[ -n "${OCLTUNE_GPU:-}" ] || { echo "run: no NVIDIA OpenCL device found" >&2; exit 1; }
mkdir -p "$OUT"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; "$bin/ocltune" devices; } \
  > "$OUT/device.txt" 2>&1
exec "${runner[@]}" --bin "$bin" "$@"
