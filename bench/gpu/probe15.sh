# Fifteenth H200 run: the TF32 GEMM suite with the GROUP_M launch order (every value sampled), then
# the best tile with GROUP_M = 1 / 4 / 8 / 16 against CLBlast fp32 in the same process.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout 120 .gpu/bin/gemm_test --gtest_brief=1 --gtest_filter='GemmTf32*' > $OUT/gemm_tf32_test.txt 2>&1
echo "gemm_test rc=$?"; grep -E "Failure|status|FAILED|PASSED" $OUT/gemm_tf32_test.txt | head -8 | cut -c1-300
b=BM=128,BN=128,BK=16,WM=2,WN=2,MMA=1,LDSM=0,BVEC=0
timeout 150 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' --baseline \
  --config $b,STAGES=0,DBUF=1,GROUP_M=1 --config $b,STAGES=0,DBUF=1,GROUP_M=8 --config $b,STAGES=0,DBUF=1,GROUP_M=16 \
  --config $b,STAGES=2,DBUF=0,GROUP_M=8 --config $b,STAGES=2,DBUF=0,GROUP_M=16 > $OUT/group-m.txt 2>&1
echo "eval rc=$?"; tail -10 $OUT/group-m.txt | cut -c1-200
