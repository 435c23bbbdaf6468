# Ninth H200 run: correctness of the new tensor-core code (GEMM cp.async stages and 16-byte B
# fragments; conv2d's implicit GEMM in tf32 and the 1x1 GEMM's tensor-core variant), and a re-run
# of the conv2d suites whose failures (work-group floor) were fixed after the eighth run. Each
# suite in its own process: a kernel that faults kills the context.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
export OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU
begin=$(date +%s)
run() {  # name, time limit, gtest filter
  [ $(( $(date +%s) - begin )) -gt 330 ] && { echo "$1 $3: not run (time)"; return; }
  local start=$(date +%s)
  timeout $2 .gpu/bin/$1 --gtest_brief=1 --gtest_filter="$3" > "$OUT/$1-${3//[^A-Za-z0-9]/_}.txt" 2>&1
  echo "$1 $3 rc=$? $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/$1-${3//[^A-Za-z0-9]/_}.txt" | tr '\n' ' ' | cut -c1-300)"
  grep -E "Failure|error:|FAILED  \]" "$OUT/$1-${3//[^A-Za-z0-9]/_}.txt" | head -6 | cut -c1-300
}
run gemm_test 90 'GemmTf32*'
run conv2d_test 150 'Conv2dTf32*'
run runtime_conv2d_test 60 '*'
run conv2d_test 120 'Conv2dSpace*:*Conv2dTable*'
