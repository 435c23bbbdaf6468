# Fifty-second H200 run (sixth session): the 16-bit pack in blocks of 64 rows x 128 k (32 loads of
# 2 bytes per work-item: the TF32 pack's bytes in flight): the pack tests against the host model,
# the packed kernels one by one (`mma_ablation_bench --packed-only`, against probe50), the half GEMM
# tests, then fp16 4096^3 through `ocltune eval` with the shipped configuration.
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
timeout 60 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm --shape '{"m":4096,"n":4096,"k":4096,"dtype":"fp16"}' \
  --config WGMMA_PACKED=1,BM=128,BN=128,BK=16,WGS=2,STAGES=3,LAG=0,GROUP_M=1 --config WGMMA_PACKED=1,BM=128,BN=128,BK=16,WGS=1,STAGES=3,LAG=0,GROUP_M=1 \
  --out $OUT/eval-fp16.json > $OUT/eval-fp16.txt 2>&1; echo "eval rc=$?"; grep -E "^ok|^wrong|^error" $OUT/eval-fp16.txt | cut -c1-160
