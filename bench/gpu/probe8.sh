# Eighth H200 run: the correctness suites of every kernel family and of the runtime on the NVIDIA
# device (test binaries carried in .gpu/bin; built in build-gpu). A kernel that faults kills the
# context, so each suite runs in its own process and reports on its own.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
export OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU
begin=$(date +%s)
for t in runtime_test runtime_conv2d_test runtime_pool_test runtime_memory_ops_test reduce_test softmax_test \
         norm_test pool_test elementwise_test gemm_test conv2d_test; do
  [ $(( $(date +%s) - begin )) -gt 280 ] && { echo "$t: not run (time)"; continue; }
  start=$(date +%s)
  timeout 70 .gpu/bin/$t --gtest_brief=1 > $OUT/$t.txt 2>&1
  echo "$t rc=$? $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/$t.txt | tr '\n' ' ' | cut -c1-200)"
done
