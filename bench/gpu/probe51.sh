# Fifty-first H200 run (sixth session): the 16-bit pack with 4-byte loads of neighbouring pairs:
# the pack tests (both load paths against the host model), the packed kernels one by one
# (`mma_ablation_bench --packed-only`, against probe50's 2-byte loads), and the half GEMM tests.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
export OCLTUNE_BENCH_DEVICE=$OCLTUNE_GPU OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU
start=$(date +%s)
timeout 60 .gpu/bin/gemm_pack_test --gtest_brief=1 > $OUT/gemm_pack_test.txt 2>&1
echo "gemm_pack_test rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $OUT/gemm_pack_test.txt | tr '\n' ' ')"
timeout 200 .gpu/bin/mma_ablation_bench --packed-only > $OUT/packed-kernels.txt 2>&1; echo "ablation rc=$?"; cat $OUT/packed-kernels.txt
timeout 200 .gpu/bin/gemm_half_test --gtest_brief=1 > $OUT/gemm_half_test.txt 2>&1
echo "gemm_half_test rc=$? $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED) ' $OUT/gemm_half_test.txt | tr '\n' ' ')"
grep -E "Failure" -A3 $OUT/gemm_half_test.txt | head -12 | cut -c1-300
