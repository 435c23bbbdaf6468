# Forty-ninth H200 run (sixth session): the mma.sync ceilings by input type (`ocltune ceilings`:
# TF32 m16n8k8, fp16 and bf16 m16n8k16), the shipped H200 database as users get it benchmarked by
# ocltune_bench on the fp16/bf16 targets (every shipped 16-bit row loads and runs; results placed
# against the fp16/bf16 ceiling measured in the same run), and the half-precision GEMM tests after
# the fragment loads moved to gemm_mma_packed.cl.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
start=$(date +%s)
timeout 60 .gpu/bin/ocltune --device $OCLTUNE_GPU ceilings > $OUT/ceilings.txt 2>&1; echo "ceilings rc=$?"; cat $OUT/ceilings.txt
timeout 300 .gpu/bin/ocltune_bench --device $OCLTUNE_GPU --shapes bench/gpu/targets-half.json --db .gpu/h200-shipped.db \
  --benchmark_repetitions=3 --benchmark_min_time=0.3 --benchmark_out=$OUT/bench.json --benchmark_out_format=json > $OUT/bench.txt 2>&1
echo "bench rc=$? $(( $(date +%s) - start ))s"; grep -E "_peak_gflops" $OUT/bench.json | head -6
python3 - "$OUT/bench.json" <<'PY'
import json, sys
for x in json.load(open(sys.argv[1]))["benchmarks"]:
    if x["name"].endswith("_median") and "/tuned/" in x["name"] or x.get("error_occurred"):
        print(x["name"][:90], round(x.get("median_us", 0), 1), "us", round(x.get("GFLOP/s", 0) / 1000, 1), "TFLOP/s",
              "peak", round(100 * x.get("peak_frac", 0), 1), "%", x.get("label", "")[:60], x.get("error_message", ""))
PY
export OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU
timeout 150 .gpu/bin/gemm_half_test --gtest_brief=1 > $OUT/gemm_half_test.txt 2>&1
echo "gemm_half_test rc=$? $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED) ' $OUT/gemm_half_test.txt | tr '\n' ' ')"
grep -E "Failure" -A3 $OUT/gemm_half_test.txt | head -12 | cut -c1-300
