# Thirty-sixth H200 run (fifth session): the wgmma variant on packed operands through the test
# suites that reach it on the GPU (the pack kernel, the GEMM, conv2d's 1x1 algorithm in every
# direction, the runtime with a packed row), then the tf32 targets as in probe11: tuned for 240 s
# from the new seeds, benchmarked against CLBlast, and cuBLAS / cuDNN in the same session.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
start=$(date +%s)
export OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU
if command -v gdb > /dev/null; then
  timeout 60 gdb -q -batch -ex run -ex bt --args .gpu/bin/gemm_pack_test --gtest_brief=1 > $OUT/gemm_pack_test.txt 2>&1
else
  timeout 60 .gpu/bin/gemm_pack_test --gtest_brief=1 > $OUT/gemm_pack_test.txt 2>&1
fi
echo "gemm_pack_test rc=$?"; grep -E "PASSED|FAILED|SIG|^#[0-9]" $OUT/gemm_pack_test.txt | head -12 | cut -c1-200
timeout 150 .gpu/bin/conv2d_test --gtest_brief=1 --gtest_filter='Conv2dTf32.*' > $OUT/conv2d_test.txt 2>&1
echo "conv2d_test rc=$? $(( $(date +%s) - start ))s"; grep -E "Failure|FAILED|PASSED|status" $OUT/conv2d_test.txt | head -6 | cut -c1-300
timeout 150 .gpu/bin/runtime_test --gtest_brief=1 --gtest_filter='RuntimeGemm.*' > $OUT/runtime_test.txt 2>&1
echo "runtime_test rc=$? $(( $(date +%s) - start ))s"; grep -E "Failure|FAILED|PASSED|SKIPPED|status" $OUT/runtime_test.txt | head -6 | cut -c1-300
unset OCLTUNE_TEST_DEVICE
export OCLTUNE_PYTHON=$(command -v python3)
timeout 420 scripts/nightly.sh --device $OCLTUNE_GPU --bin .gpu/bin --out $OUT/n --shapes bench/gpu/targets-tf32.json \
  --tune-budget 240s --repetitions 3 --min-time 0.3 > $OUT/nightly.txt 2>&1
echo "nightly rc=$? $(( $(date +%s) - start ))s"; tail -3 $OUT/nightly.txt
L=$OUT/n/latest
cp $L/bench.json $OUT/bench.json; cp $L/tune.log $OUT/tune.log; cp $L/bench.log $OUT/bench.log 2>/dev/null
cp $OUT/n/tuned.db $OUT/h200-tf32.db
timeout 90 python3 bench/baselines/cuda_torch_baseline.py > $OUT/torch_baseline.txt 2>&1
grep -E "tf32|cudnn" $OUT/torch_baseline.txt | head -20
rm -rf $OUT/n/runs
