# Twenty-third H200 run: the first wgmma GEMM (kernels/gemm_wgmma.cl: Hopper's warpgroup MMA via
# inline PTX, operands straight from local memory through descriptors). (1) odd shapes in all four
# layouts against the float64 reference; (2) the tensor-core GEMM tests (their covering sample now
# includes the wgmma variant); (3) 4096^3 tiles against the best mma.sync tile and CLBlast fp32.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
O=.gpu/bin/ocltune
w=WGMMA=1,BK=16,BM=128,BN=128,WGS=1
for sh in '{"m":300,"n":200,"k":100,"math":"tf32"}' '{"m":77,"n":129,"k":1000,"math":"tf32","trans_a":true}' \
          '{"m":130,"n":64,"k":33,"math":"tf32","trans_b":true}' '{"m":64,"n":300,"k":64,"math":"tf32","trans_a":true,"trans_b":true,"batch":3}'; do
  OCLTUNE_BUILD_LOG=1 timeout 60 $O --device $OCLTUNE_GPU eval --op gemm --shape "$sh" --config $w \
    --config WGMMA=1,BK=32,BM=64,BN=64,WGS=1 --config WGMMA=1,BK=16,BM=128,BN=256,WGS=2 > $OUT/odd.txt 2>&1
  echo "odd $sh rc=$?"; grep -E "^(ok|wrong|fail|error)|rror" $OUT/odd.txt | head -6 | cut -c1-220
done
start=$(date +%s)
OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout 150 .gpu/bin/gemm_test --gtest_brief=1 --gtest_filter='GemmTf32.*' > $OUT/gemm_test.txt 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gemm_test.txt | tr '\n' ' ' | cut -c1-200)"
grep -E "Failure|FAILED  \]|status" $OUT/gemm_test.txt | head -6 | cut -c1-300
OCLTUNE_BUILD_OPTIONS=-cl-nv-verbose OCLTUNE_BUILD_LOG=1 timeout 200 $O --device $OCLTUNE_GPU eval --op gemm \
  --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' --baseline \
  --config BK=16,BM=128,BN=128,MMA=1,WM=2,WN=2,GROUP_M=1,STAGES=0,DBUF=1,LDSM=0,BVEC=0,SWIZZLE=0,FRAG_DBUF=0 \
  --config WGMMA=1,BK=16,BM=128,BN=128,WGS=1 --config WGMMA=1,BK=16,BM=128,BN=128,WGS=2 \
  --config WGMMA=1,BK=16,BM=128,BN=256,WGS=2 --config WGMMA=1,BK=16,BM=64,BN=256,WGS=1 \
  --config WGMMA=1,BK=32,BM=64,BN=128,WGS=1 --config WGMMA=1,BK=16,BM=256,BN=128,WGS=2 \
  --config WGMMA=1,BK=16,BM=64,BN=128,WGS=1 --config WGMMA=1,BK=32,BM=128,BN=64,WGS=2 \
  --out $OUT/wgmma-eval.json > $OUT/wgmma-eval.txt 2>&1
echo "eval rc=$?"; grep -E "ptxas info *: Used|spill stores|wgmma|Potential" $OUT/wgmma-eval.txt | grep -v " 0 bytes spill" | cut -c1-160 | head -24
grep -vE "ptxas|^ *$" $OUT/wgmma-eval.txt | tail -14 | cut -c1-220
