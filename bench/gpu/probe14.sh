# Fourteenth H200 run: the softmax, reduce and GEMM suites on the NVIDIA device after the PoCL work
# on softmax (polynomial exp, prefetch variant) and the CPU GEMM variant (absent there); then TF32
# GEMM tiles with eight warps (128x256, 256x128) and 64x32 warp tiles with deeper cp.async
# pipelines, against the best register-staged tile and CLBlast fp32 in the same process.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f  # after env.sh (it globs .gpu/*.deb): the gtest filters below are not file globs
for t in "softmax_test 120 *" "gemm_test 120 *"; do
  set -- $t
  start=$(date +%s)
  OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout $2 .gpu/bin/$1 --gtest_brief=1 --gtest_filter="$3" > $OUT/$1.txt 2>&1
  echo "$1 rc=$? $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/$1.txt | tr '\n' ' ' | cut -c1-200)"
  grep -E "Failure|FAILED  \]" $OUT/$1.txt | head -4 | cut -c1-300
done
m=MMA=1,DBUF=0,LDSM=0,BVEC=0
timeout 200 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' --baseline \
  --config BM=128,BN=128,BK=16,WM=2,WN=2,STAGES=0,MMA=1,DBUF=1,LDSM=0,BVEC=0 \
  --config BM=128,BN=256,BK=8,WM=2,WN=4,STAGES=3,$m --config BM=128,BN=256,BK=8,WM=2,WN=4,STAGES=2,$m \
  --config BM=256,BN=128,BK=8,WM=4,WN=2,STAGES=2,$m --config BM=128,BN=128,BK=8,WM=2,WN=4,STAGES=4,$m \
  --config BM=128,BN=128,BK=16,WM=2,WN=4,STAGES=2,MMA=1,DBUF=0,LDSM=1,BVEC=0 \
  --config BM=128,BN=256,BK=16,WM=2,WN=4,STAGES=0,$m --config BM=128,BN=256,BK=8,WM=2,WN=4,STAGES=0,MMA=1,DBUF=1,LDSM=0,BVEC=0 \
  > $OUT/tf32-tiles.txt 2>&1
echo "eval rc=$?"; tail -14 $OUT/tf32-tiles.txt | cut -c1-200
