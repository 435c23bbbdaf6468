# Twenty-first H200 run: KPACK, the TF32 GEMM's unpadded swizzled tiles (a lane reads four adjacent
# k, 16-byte A reads; 3 cp.async stages of 128x128x16 fit the 48 KiB). (1) the tensor-core GEMM and
# conv2d tests on the NVIDIA device; (2) KPACK tiles against the best unpacked one and CLBlast fp32
# KPACK, the layout this run measured, was removed after it (40% slower than the unpacked tiles;
# docs/NOTES.md "TF32 GEMM on the H200, fourth session").
# in the same process, with the driver's register report.
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
b=BK=16,BM=128,BN=128,MMA=1,WM=2,WN=2,LDSM=0
OCLTUNE_BUILD_OPTIONS=-cl-nv-verbose OCLTUNE_BUILD_LOG=1 timeout 200 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm \
  --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' --baseline \
  --config $b,STAGES=0,DBUF=1,BVEC=0,GROUP_M=1,KPACK=0 \
  --config $b,STAGES=3,DBUF=0,BVEC=0,GROUP_M=1,KPACK=1 --config $b,STAGES=3,DBUF=0,BVEC=1,GROUP_M=1,KPACK=1 \
  --config $b,STAGES=3,DBUF=0,BVEC=0,GROUP_M=8,KPACK=1 --config $b,STAGES=2,DBUF=0,BVEC=0,GROUP_M=1,KPACK=1 \
  --config $b,STAGES=0,DBUF=1,BVEC=0,GROUP_M=1,KPACK=1 --config $b,STAGES=0,DBUF=1,BVEC=1,GROUP_M=1,KPACK=1 \
  --config BK=16,BM=256,BN=128,MMA=1,WM=4,WN=2,LDSM=0,STAGES=2,DBUF=0,BVEC=0,GROUP_M=1,KPACK=1 \
  --config BK=16,BM=128,BN=256,MMA=1,WM=2,WN=4,LDSM=0,STAGES=2,DBUF=0,BVEC=1,GROUP_M=1,KPACK=1 \
  --config BK=32,BM=128,BN=64,MMA=1,WM=2,WN=1,LDSM=0,STAGES=2,DBUF=0,BVEC=0,GROUP_M=1,KPACK=1 \
  --out $OUT/kpack-eval.json > $OUT/kpack-eval.txt 2>&1
echo "eval rc=$?"; grep -iE "registers|spill" $OUT/kpack-eval.txt | sort | uniq -c | head -20 | cut -c1-200
grep -vE "ptxas|registers|spill|^ *$" $OUT/kpack-eval.txt | tail -16 | cut -c1-220
