# Fifth H200 run: the issue-7 target shapes tuned (150 s budget) and benchmarked by the nightly
# script (tuned vs default vs CLBlast / copy, same process), the cuBLAS/cuDNN references, and the
# TF32 tensor-core correctness tests of the newer kernel variants.
set -u
. bench/gpu/env.sh
OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout 60 build-gpu/tests/gemm_test --gtest_brief=1 --gtest_filter='GemmTf32*' > $OUT/gemm_tf32_test.txt 2>&1
grep -E "FAILED|PASSED|Failure" $OUT/gemm_tf32_test.txt | head -5
export OCLTUNE_PYTHON=$(command -v python3)
timeout 400 scripts/nightly.sh --device $OCLTUNE_GPU --bin build-gpu --out $OUT/n --shapes bench/gpu/targets.json \
  --tune-budget 150s --repetitions 3 --min-time 0.3 > $OUT/nightly.txt 2>&1
echo "nightly rc=$?"; tail -5 $OUT/nightly.txt
L=$OUT/n/latest
cp $L/bench.json $OUT/bench.json; cp $L/tune.log $OUT/tune.log; cp $L/bench.log $OUT/bench.log 2>/dev/null
cp $L/report/index.html $OUT/index.html 2>/dev/null
cp $OUT/n/tuned.db $OUT/h200-targets.db
tail -25 $OUT/tune.log | cut -c1-200
timeout 100 python3 bench/baselines/cuda_torch_baseline.py > $OUT/torch_baseline.txt 2>&1
grep -E "fp32 n=4096|tf32 n=4096|cudnn fp32|sum|relu|softmax|copy" $OUT/torch_baseline.txt
rm -rf $OUT/n/runs
