# Fifty-third H200 run (sixth session): the built-in GEMM configurations where tensor cores are
# allowed (packed kernels, 128 x 128 or 64 x 64 tiles by the shape): every default on the odd-size
# table in fp16 and bf16 (gemm_half_test), the runtime GEMM tests (built-in level included), and the
# tensor-core GEMM tests.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
export OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU
start=$(date +%s)
t() {  # binary, filter, timeout
  timeout $3 .gpu/bin/$1 --gtest_brief=1 --gtest_filter="$2" > $OUT/$1.txt 2>&1
  echo "$1 $2 rc=$? $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/$1.txt | tr '\n' ' ')"
  grep -E "Failure|error" -A3 $OUT/$1.txt | head -12 | cut -c1-300
}
t gemm_half_test '*' 200
t runtime_test 'RuntimeGemm.*:RuntimeLookup.*' 120
t gemm_test 'GemmTf32.TensorCoreVariantIsAbsentWithoutTheCapability:GemmSpace.*:GemmVerification.*' 100
