# Twelfth H200 run: (1) conv2d's table of every algorithm's default in every direction and the norm
# suite (the rows-in-registers layer_norm variant) on the NVIDIA device; (2) the best TF32 GEMM
# configurations of probe11 again after mma.sync stopped being volatile, with CLBlast fp32 in the
# same process; (3) fp32 GEMM 4096^3 and layer_norm 4096x768 tuned within 150 s and benchmarked
# against CLBlast / a copy of the same bytes by the nightly script.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f  # after env.sh (it globs .gpu/*.deb): the gtest filters below are not file globs
for t in "conv2d_test 150 *Conv2dTable*" "norm_test 90 *"; do
  set -- $t
  start=$(date +%s)
  OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout $2 .gpu/bin/$1 --gtest_brief=1 --gtest_filter="$3" > $OUT/$1.txt 2>&1
  echo "$1 rc=$? $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/$1.txt | tr '\n' ' ' | cut -c1-200)"
  grep -E "Failure|FAILED  \]" $OUT/$1.txt | head -4 | cut -c1-300
done
base=BK=16,BM=128,BN=128,MMA=1,WM=2
timeout 150 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' --baseline \
  --config $base,WN=2,STAGES=0,DBUF=1,LDSM=0,BVEC=0 --config $base,WN=2,STAGES=0,DBUF=1,LDSM=1,BVEC=0 \
  --config $base,WN=2,STAGES=2,DBUF=0,LDSM=0,BVEC=0 --config $base,WN=2,STAGES=2,DBUF=0,LDSM=1,BVEC=0 \
  --config $base,WN=2,STAGES=0,DBUF=1,LDSM=0,BVEC=1 --config $base,WN=4,STAGES=2,DBUF=0,LDSM=0,BVEC=0 \
  --config BK=32,BM=128,BN=128,MMA=1,WM=2,WN=2,STAGES=0,DBUF=0,LDSM=1,BVEC=0 --out $OUT/tf32-eval.json > $OUT/tf32-eval.txt 2>&1
echo "eval rc=$?"; tail -12 $OUT/tf32-eval.txt | cut -c1-200
export OCLTUNE_PYTHON=$(command -v python3)
timeout 260 scripts/nightly.sh --device $OCLTUNE_GPU --bin .gpu/bin --out $OUT/n --shapes bench/gpu/targets-fp32-ln.json \
  --tune-budget 150s --repetitions 3 --min-time 0.3 > $OUT/nightly.txt 2>&1
echo "nightly rc=$?"; tail -3 $OUT/nightly.txt
L=$OUT/n/latest
cp $L/bench.json $OUT/bench.json; cp $L/tune.log $OUT/tune.log; cp $L/report/index.html $OUT/index.html 2>/dev/null
grep -A4 "^op " $OUT/tune.log | cut -c1-250
rm -rf $OUT/n/runs
