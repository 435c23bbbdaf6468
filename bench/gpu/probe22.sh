# Twenty-second H200 run: fragments double-buffered in registers across k-steps and tile
# boundaries (FRAG_DBUF, with cp.async stages) and unpadded XOR-swizzled tiles (SWIZZLE: 3 stages
# of 128x128x16 in 48 KiB). (1) the tensor-core GEMM and conv2d tests on the NVIDIA device;
# (2) the new configurations against the best register-staged tile and CLBlast fp32, same process.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f  # after env.sh (it globs .gpu/*.deb): the gtest filters below are not file globs
for t in "gemm_test 150 GemmTf32.*" "conv2d_test 150 Conv2dTf32.*"; do
  set -- $t
  start=$(date +%s)
  OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout $2 .gpu/bin/$1 --gtest_brief=1 --gtest_filter="$3" > $OUT/$1.txt 2>&1
  echo "$1 rc=$? $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/$1.txt | tr '\n' ' ' | cut -c1-200)"
  grep -E "Failure|FAILED  \]|status" $OUT/$1.txt | head -6 | cut -c1-300
done
b=BK=16,BM=128,BN=128,MMA=1,WM=2,WN=2,GROUP_M=1
OCLTUNE_BUILD_OPTIONS=-cl-nv-verbose OCLTUNE_BUILD_LOG=1 timeout 240 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm \
  --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' --baseline \
  --config $b,STAGES=0,DBUF=1,LDSM=0,BVEC=0,SWIZZLE=0,FRAG_DBUF=0 \
  --config $b,STAGES=0,DBUF=1,LDSM=0,BVEC=0,SWIZZLE=1,FRAG_DBUF=0 \
  --config $b,STAGES=2,DBUF=0,LDSM=0,BVEC=0,SWIZZLE=0,FRAG_DBUF=1 \
  --config $b,STAGES=2,DBUF=0,LDSM=0,BVEC=0,SWIZZLE=1,FRAG_DBUF=1 \
  --config $b,STAGES=3,DBUF=0,LDSM=0,BVEC=0,SWIZZLE=1,FRAG_DBUF=1 \
  --config $b,STAGES=3,DBUF=0,LDSM=0,BVEC=0,SWIZZLE=1,FRAG_DBUF=0 \
  --config $b,STAGES=3,DBUF=0,LDSM=1,BVEC=0,SWIZZLE=1,FRAG_DBUF=1 \
  --config $b,STAGES=3,DBUF=0,LDSM=0,BVEC=1,SWIZZLE=1,FRAG_DBUF=1 \
  --config BK=16,BM=128,BN=64,MMA=1,WM=2,WN=2,GROUP_M=1,STAGES=4,DBUF=0,LDSM=0,BVEC=0,SWIZZLE=1,FRAG_DBUF=1 \
  --config BK=16,BM=256,BN=128,MMA=1,WM=4,WN=2,GROUP_M=1,STAGES=2,DBUF=0,LDSM=0,BVEC=0,SWIZZLE=1,FRAG_DBUF=1 \
  --out $OUT/fragdbuf-eval.json > $OUT/fragdbuf-eval.txt 2>&1
echo "eval rc=$?"; grep -E "ptxas info *: Used|spill stores" $OUT/fragdbuf-eval.txt | grep -v " 0 bytes spill" | cut -c1-120 | paste - - | head -12
grep -vE "ptxas|^ *$" $OUT/fragdbuf-eval.txt | tail -15 | cut -c1-220
