# Thirty-fourth H200 run: the wgmma GEMM as committed at the end of the fourth session (register
# staging, one tile ahead, wgmma drained before each barrier, accumulators fenced only at the
# ends): the tensor-core GEMM tests (every wgmma configuration), the loop-step study and 4096^3
# NN against the best mma.sync tile and CLBlast fp32.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
start=$(date +%s)
OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout 200 .gpu/bin/gemm_test --gtest_brief=1 --gtest_filter='GemmTf32.*' > $OUT/gemm_test.txt 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gemm_test.txt | tr '\n' ' ' | cut -c1-200)"
grep -E "Failure|FAILED  \]|status" $OUT/gemm_test.txt | head -6 | cut -c1-300
OCLTUNE_BENCH_DEVICE=$OCLTUNE_GPU timeout 100 .gpu/bin/mma_ablation_bench > $OUT/ablation.txt 2>&1; grep -A7 "WGMMA" $OUT/ablation.txt | head -22
timeout 100 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' --baseline \
  --config BK=16,BM=128,BN=128,MMA=1,WM=2,WN=2,GROUP_M=1,STAGES=0,DBUF=1,LDSM=0,BVEC=0,SWIZZLE=0,FRAG_DBUF=0 \
  --config WGMMA=1,BK=16,BM=64,BN=256,WGS=1 --config WGMMA=1,BK=16,BM=128,BN=256,WGS=2 \
  --out $OUT/final-eval.json > $OUT/final-eval.txt 2>&1
echo "eval rc=$?"; grep -E "^clblast|best /" $OUT/final-eval.txt; grep -A4 "^fastest" $OUT/final-eval.txt | cut -c1-200
