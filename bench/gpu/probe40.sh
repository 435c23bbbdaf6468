# Fortieth H200 run (fifth session): the runtime with a packed wgmma GEMM row (three kernels bound
# on every call; probe36's failure was the test's row lacking its math mode), and the runtime
# conv2d tests (tf32 rows) on the GPU.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
export OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU
timeout 200 .gpu/bin/runtime_test --gtest_brief=1 --gtest_filter='RuntimeGemm.*' > $OUT/runtime_test.txt 2>&1
echo "runtime_test rc=$?"; grep -E "Failure|FAILED|PASSED|SKIPPED" $OUT/runtime_test.txt | head -8 | cut -c1-300
timeout 200 .gpu/bin/runtime_conv2d_test --gtest_brief=1 > $OUT/runtime_conv2d_test.txt 2>&1
echo "runtime_conv2d_test rc=$?"; grep -E "Failure|FAILED|PASSED|SKIPPED" $OUT/runtime_conv2d_test.txt | head -8 | cut -c1-300
