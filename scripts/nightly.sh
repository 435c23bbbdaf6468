#!/usr/bin/env bash
# Nightly device benchmark for cron or a CI schedule: tune within a time budget, run the benchmark
# suite, write the HTML report and append the history. Exit: 0, 1 failure, 2 usage, 3 regression.
set -uo pipefail

usage() {
  cat <<'USAGE'
usage: scripts/nightly.sh [options]
  --device N            OpenCL device index, as `ocltune devices` lists it (default 0)
  --out DIR             results root (default ./nightly): DIR/tuned.db, DIR/history/, DIR/runs/<UTC>/,
                        DIR/latest -> the newest run
  --db PATH             tuning database (default DIR/tuned.db; kept between nights, so tuning resumes)
  --ops LIST            op families, comma-separated (default all)
  --shapes NAME|FILE    shape preset or JSON shapes file (default: quick on CPUs, default elsewhere)
  --tune-budget T       time budget of the tuning step, e.g. 30m, 90s, 2h; 0 skips tuning (default 30m)
  --max-evals N         evaluations per shape and night besides the default (default: the tuner's)
  --repetitions R       benchmark repetitions; the report uses their median (default 3)
  --min-time S          seconds per benchmark repetition (default 0.5)
  --bin DIR             where ocltune and ocltune_bench are (default $OCLTUNE_BIN_DIR, else ./build, else PATH)
  --models LIST         PyTorch models whose step times join the report (ocltune_torch/bench/models.py, on
                        ocl:N against --models-baseline): comma-separated, all, or none (default all when
                        the backend is built: $OCLTUNE_TORCH_LIBRARY, else BIN/ocltune_torch/libocltune_torch.so)
  --models-baseline D   cpu or cuda (default cpu)
  --fail-on-regression  exit 3 when a key figure regressed beyond its noise
USAGE
}

repo=$(cd "$(dirname "$0")/.." && pwd)
device=0 out=nightly db="" ops=all shapes="" tune_budget=30m max_evals="" repetitions=3 min_time=0.5
models=all models_baseline=cpu
bin="${OCLTUNE_BIN_DIR:-}" fail_flag=()
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --db) db=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --shapes) shapes=$2; shift 2 ;;
    --tune-budget) tune_budget=$2; shift 2 ;;
    --max-evals) max_evals=$2; shift 2 ;;
    --repetitions) repetitions=$2; shift 2 ;;
    --min-time) min_time=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --models-baseline) models_baseline=$2; shift 2 ;;
    --fail-on-regression) fail_flag=(--fail-on-regression); shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "nightly: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[[ "$tune_budget" =~ ^[0-9]+[smh]?$ ]] || { echo "nightly: --tune-budget takes e.g. 30m, 90s, 2h" >&2; exit 2; }

if [ -z "$bin" ]; then
  if [ -x "$repo/build/ocltune" ] && [ -x "$repo/build/ocltune_bench" ]; then bin="$repo/build"; fi
fi
ocltune=${bin:+$bin/}ocltune
bench=${bin:+$bin/}ocltune_bench
for tool in "$ocltune" "$bench"; do
  command -v "$tool" >/dev/null || { echo "nightly: cannot find $tool (build first or pass --bin)" >&2; exit 2; }
done

mkdir -p "$out/runs" "$out/history"
out=$(cd "$out" && pwd)
db=${db:-$out/tuned.db}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
run="$out/runs/$stamp"
mkdir -p "$run"
shape_flag=(); [ -n "$shapes" ] && shape_flag=(--shapes "$shapes")
status=0

# 1. Tuning within the budget: SIGINT stops the tuner after the evaluation in flight, and every
#    finished evaluation is already in the database; tomorrow's run resumes where this one stopped.
if [ "${tune_budget%[smh]}" -gt 0 ]; then
  evals_flag=(); [ -n "$max_evals" ] && evals_flag=(--max-evals "$max_evals")
  echo "nightly: tuning for at most $tune_budget -> $db"
  timeout --preserve-status --signal=INT --kill-after=120 "$tune_budget" \
    "$ocltune" tune --device "$device" --ops "$ops" --db "$db" "${shape_flag[@]}" "${evals_flag[@]}" \
    >"$run/tune.log" 2>&1
  rc=$?
  case $rc in
    0) ;;
    130) echo "nightly: tuning budget reached; finished evaluations are kept" ;;
    *) echo "nightly: tuning failed (exit $rc), see $run/tune.log" >&2; status=1 ;;
  esac
fi

# 2. The benchmark suite: tuned vs default vs baselines, ceilings measured at the start.
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || true)
context_flag=(); [ -n "$commit" ] && context_flag=("--benchmark_context=ocltune_commit=$commit")
echo "nightly: benchmarking -> $run/bench.json"
"$bench" --device "$device" --ops "$ops" --db "$db" "${shape_flag[@]}" \
  --benchmark_out="$run/bench.json" --benchmark_out_format=json \
  --benchmark_repetitions="$repetitions" --benchmark_min_time="$min_time" "${context_flag[@]}" \
  >"$run/bench.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then echo "nightly: benchmark suite exit $rc, see $run/bench.log" >&2; status=1; fi
if [ ! -s "$run/bench.json" ]; then echo "nightly: no benchmark results" >&2; exit 1; fi

# 2b. The models' step times (issue 21), filed under the same device through bench.json's context, so
#     a slower training step is flagged like a slower kernel.
bench_files=("$run/bench.json")
torch_library=${OCLTUNE_TORCH_LIBRARY:-${bin:+$bin/}ocltune_torch/libocltune_torch.so}
torch_python=${OCLTUNE_TORCH_PYTHON:-$repo/.venv/bin/python}
if [ "$models" != none ]; then
  if [ -f "$torch_library" ] && [ -x "$torch_python" ]; then
    echo "nightly: model steps ($models) -> $run/models.json"
    OCLTUNE_TORCH_LIBRARY=$torch_library OCLTUNE_DB=$db PYTHONPATH=$repo "$torch_python" \
      "$repo/ocltune_torch/bench/models.py" --models "$models" --baseline "$models_baseline" --ocl "ocl:$device" \
      --reps "$((repetitions > 3 ? repetitions : 3))" --warmup 1 --gbench-json "$run/models.json" \
      --gbench-context "$run/bench.json" >"$run/models.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
      bench_files+=("$run/models.json")
    else
      echo "nightly: model benchmark exit $rc, see $run/models.log" >&2; status=1
    fi
  else
    echo "nightly: no PyTorch backend ($torch_library, $torch_python): model steps not measured"
  fi
fi

# 3. The report, with this run appended to the history and compared with earlier nights.
"$ocltune" report --db "$db" --bench "${bench_files[@]}" --out "$run/report" --history "$out/history" \
  --title "ocltune nightly $stamp" "${fail_flag[@]}"
rc=$?
ln -sfn "runs/$stamp" "$out/latest"
echo "nightly: report $run/report/index.html"
if [ $rc -eq 3 ]; then exit 3; fi
if [ $rc -ne 0 ]; then exit 1; fi
exit $status
