# Sixth H200 run: what a user runs, `ocltune --device <nvidia> --ops all` on a fresh database with
# the default preset and the default GPU budget, timed; the tuned rows exported as JSON lines for
# db/shipped; the runtime's dispatch overhead on the NVIDIA driver.
set -u
. bench/gpu/env.sh
export OCLTUNE_BINARY_CACHE=$OUT/bincache
start=$(date +%s)
timeout 480 build-gpu/ocltune --device $OCLTUNE_GPU --ops all --db $OUT/h200.db > $OUT/tune_all.txt 2>&1
echo "tune rc=$? wall=$(( $(date +%s) - start )) s"
tail -60 $OUT/tune_all.txt | cut -c1-220
build-gpu/ocltune db export --db $OUT/h200.db --best-only -o $OUT/h200.jsonl && wc -l $OUT/h200.jsonl

OCLTUNE_BENCH_DEVICE=$OCLTUNE_GPU timeout 60 build-gpu/bench/dispatch_bench --benchmark_repetitions=5 --benchmark_min_time=0.2 \
  --benchmark_report_aggregates_only=true > $OUT/dispatch.txt 2>&1; echo "dispatch rc=$?"
grep -E "median|Ratio|ratio|extra" $OUT/dispatch.txt | head -20
rm -rf $OUT/bincache
