# Tenth H200 run: the tf32 targets (GEMM 4096^3, four ResNet-50 forward layers at batch 32) tuned
# within 240 s and benchmarked by the nightly script (tuned vs default vs CLBlast, same process),
# then cuBLAS / cuDNN in fp32 and TF32 for the same-session ratios.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
export OCLTUNE_PYTHON=$(command -v python3)
timeout 420 scripts/nightly.sh --device $OCLTUNE_GPU --bin .gpu/bin --out $OUT/n --shapes bench/gpu/targets-tf32.json \
  --tune-budget 240s --repetitions 3 --min-time 0.3 > $OUT/nightly.txt 2>&1
echo "nightly rc=$?"; tail -5 $OUT/nightly.txt
L=$OUT/n/latest
cp $L/bench.json $OUT/bench.json; cp $L/tune.log $OUT/tune.log; cp $L/bench.log $OUT/bench.log 2>/dev/null
cp $L/report/index.html $OUT/index.html 2>/dev/null
cp $OUT/n/tuned.db $OUT/h200-tf32.db
grep -E "best|gemm|conv2d" $OUT/tune.log | tail -30 | cut -c1-220
timeout 100 python3 bench/baselines/cuda_torch_baseline.py > $OUT/torch_baseline.txt 2>&1
cat $OUT/torch_baseline.txt | head -30
rm -rf $OUT/n/runs
