# Forty-third H200 run (fifth session): the shipped H200 database as users get it
# (db/shipped/nvidia-h200.jsonl merged into a .db), benchmarked by ocltune_bench on the tf32
# targets: every shipped tf32 row loads and runs, and tf32 results are placed against the TF32
# mma.sync ceiling measured at the start of the run.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
timeout 300 .gpu/bin/ocltune_bench --device $OCLTUNE_GPU --shapes bench/gpu/targets-tf32.json --db .gpu/h200-shipped.db \
  --benchmark_repetitions=3 --benchmark_min_time=0.3 --benchmark_out=$OUT/bench.json --benchmark_out_format=json > $OUT/bench.txt 2>&1
echo "bench rc=$?"; grep -E "tf32_peak|peak_gflops" $OUT/bench.json | head -4
python3 - "$OUT/bench.json" <<'PY'
import json, sys
for x in json.load(open(sys.argv[1]))["benchmarks"]:
    if x["name"].endswith("_median") and "/tuned/" in x["name"] or x.get("error_occurred"):
        print(x["name"][:90], round(x.get("median_us", 0), 1), "us", round(x.get("GFLOP/s", 0) / 1000, 1), "TFLOP/s",
              "peak", round(100 * x.get("peak_frac", 0), 1), "%", x.get("error_message", ""))
PY
