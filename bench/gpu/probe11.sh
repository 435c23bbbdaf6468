# Eleventh H200 run: the TF32 GEMM tests again (probe9 lost the context on a test that ran an NN
# space's ldmatrix configuration on a transposed A; the test now samples each layout's space and
# the kernel refuses to build such a combination), then the tf32 targets as in probe10 with a
# 200 s tuning budget, and cuBLAS / cuDNN fp32 and TF32 in the same session.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout 80 .gpu/bin/gemm_test --gtest_brief=1 --gtest_filter='GemmTf32*' > $OUT/gemm_tf32_test.txt 2>&1
echo "gemm_test rc=$?"; grep -E "Failure|status|FAILED|PASSED" $OUT/gemm_tf32_test.txt | head -8 | cut -c1-300
export OCLTUNE_PYTHON=$(command -v python3)
timeout 380 scripts/nightly.sh --device $OCLTUNE_GPU --bin .gpu/bin --out $OUT/n --shapes bench/gpu/targets-tf32.json \
  --tune-budget 200s --repetitions 3 --min-time 0.3 > $OUT/nightly.txt 2>&1
echo "nightly rc=$?"; tail -5 $OUT/nightly.txt
L=$OUT/n/latest
cp $L/bench.json $OUT/bench.json; cp $L/tune.log $OUT/tune.log; cp $L/bench.log $OUT/bench.log 2>/dev/null
cp $L/report/index.html $OUT/index.html 2>/dev/null
cp $OUT/n/tuned.db $OUT/h200-tf32.db
timeout 90 python3 bench/baselines/cuda_torch_baseline.py > $OUT/torch_baseline.txt 2>&1
grep -E "tf32|cudnn" $OUT/torch_baseline.txt | head -20
rm -rf $OUT/n/runs
