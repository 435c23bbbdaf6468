# Thirty-ninth H200 run (fifth session): the tf32 targets as in probe36 (tuned from the defaults
# and seeds, which now include the packed wgmma GEMM and conv2d's im2col_gemm_tf32, then
# benchmarked against CLBlast), and cuBLAS / cuDNN fp32 and TF32 in the same session. The tuned
# rows replace the shipped H200 tf32 rows.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
start=$(date +%s)
export OCLTUNE_PYTHON=$(command -v python3)
timeout 480 scripts/nightly.sh --device $OCLTUNE_GPU --bin .gpu/bin --out $OUT/n --shapes bench/gpu/targets-tf32.json \
  --tune-budget 300s --repetitions 3 --min-time 0.3 > $OUT/nightly.txt 2>&1
echo "nightly rc=$? $(( $(date +%s) - start ))s"; tail -3 $OUT/nightly.txt
L=$OUT/n/latest
cp $L/bench.json $OUT/bench.json; cp $L/tune.log $OUT/tune.log
cp $OUT/n/tuned.db $OUT/h200-tf32.db
timeout 90 python3 bench/baselines/cuda_torch_baseline.py > $OUT/torch_baseline.txt 2>&1
grep -E "tf32|cudnn" $OUT/torch_baseline.txt | head -20
rm -rf $OUT/n
