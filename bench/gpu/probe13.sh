# Thirteenth H200 run: the norm suite on the NVIDIA device (rows-in-registers layer_norm), the
# driver's PTX and register report of the best TF32 GEMM configurations (ptxas -v on the dumped
# PTX explains them offline), 16 random configurations of conv2d's tensor-core implicit GEMM on a
# ResNet-50 3x3 layer, and a layer_norm database row to ship.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f  # after env.sh (it globs .gpu/*.deb): the gtest filters below are not file globs
O=.gpu/bin/ocltune
start=$(date +%s)
OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout 100 .gpu/bin/norm_test --gtest_brief=1 > $OUT/norm_test.txt 2>&1
echo "norm_test rc=$? $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/norm_test.txt | tr '\n' ' ')"
grep -E "Failure|FAILED  \]" $OUT/norm_test.txt | head -4 | cut -c1-300
mkdir -p $OUT/ptx
base=BK=16,BM=128,BN=128,MMA=1,WM=2,WN=2
OCLTUNE_DUMP_SOURCES=$OUT/ptx OCLTUNE_BUILD_OPTIONS=-cl-nv-verbose OCLTUNE_BUILD_LOG=1 timeout 100 $O --device $OCLTUNE_GPU eval \
  --op gemm --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' --config $base,STAGES=0,DBUF=1,LDSM=0,BVEC=0 \
  --config $base,STAGES=2,DBUF=0,LDSM=0,BVEC=0 --config $base,STAGES=0,DBUF=1,LDSM=0,BVEC=1 > $OUT/verbose.txt 2>&1
echo "verbose eval rc=$?"; grep -iE "registers|spill|GFLOP" $OUT/verbose.txt | head -12 | cut -c1-200
conv='{"op":"conv2d","dir":"fwd","n":32,"c":64,"h":56,"w":56,"k":64,"r":3,"s":3,"pad":1,"math":"tf32"}'
timeout 150 $O --device $OCLTUNE_GPU --restrict ALGO=5 --seed 3 eval --op conv2d --shape "$conv" --sample 16 \
  --config ALGO=2,KWG=16,MWG=64,NWG=128,SA=1,VWL=4,VWN=1,WINO_M=4,WINO_TPI=1,WINO_WG=64,WPTM=8,WPTN=8,WTN=0 > $OUT/conv-tf32-sample.txt 2>&1
echo "conv sample rc=$?"; tail -12 $OUT/conv-tf32-sample.txt | cut -c1-200
timeout 120 $O --device $OCLTUNE_GPU --db $OUT/ln.db --ops norm --shapes bench/gpu/targets-fp32-ln.json --max-evals 40 > $OUT/ln-tune.txt 2>&1
echo "ln tune rc=$?"; grep -A2 "^op " $OUT/ln-tune.txt | cut -c1-200
