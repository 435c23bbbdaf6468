# Twenty-ninth H200 run: the final binaries of the fourth session on the NVIDIA device: the
# tensor-core GEMM tests (every wgmma configuration, a covering sample of mma.sync's with the new
# SWIZZLE and FRAG_DBUF), conv2d's and the runtime's tf32 tests; then 4096^3 NN once more with
# the wgmma tiles (the staging order of probe23-27) and CLBlast fp32 in the same process.
# (The wgmma tunables DEPTH and STAGING were removed after probe33: configurations naming them are
# outside the space now; docs/NOTES.md "TF32 GEMM on the H200, fourth session" has their figures.)
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
for t in "gemm_test 240 GemmTf32.*" "conv2d_test 120 Conv2dTf32.*" "runtime_conv2d_test 60 *Tf32*"; do
  set -- $t
  start=$(date +%s)
  OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout $2 .gpu/bin/$1 --gtest_brief=1 --gtest_filter="$3" > $OUT/$1.txt 2>&1
  echo "$1 rc=$? $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/$1.txt | tr '\n' ' ' | cut -c1-200)"
  grep -E "Failure|FAILED  \]|status" $OUT/$1.txt | head -6 | cut -c1-300
done
timeout 120 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' --baseline \
  --config BK=16,BM=128,BN=128,MMA=1,WM=2,WN=2,GROUP_M=1,STAGES=0,DBUF=1,LDSM=0,BVEC=0,SWIZZLE=0,FRAG_DBUF=0 \
  --config WGMMA=1,BK=16,BM=64,BN=256,WGS=1,DEPTH=1 --config WGMMA=1,BK=16,BM=128,BN=256,WGS=2,DEPTH=2 \
  --out $OUT/final-eval.json > $OUT/final-eval.txt 2>&1
echo "eval rc=$?"; grep -E "^clblast|best /" $OUT/final-eval.txt; grep -A4 "^fastest" $OUT/final-eval.txt | cut -c1-200
