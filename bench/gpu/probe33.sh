# Thirty-third H200 run: the wgmma GEMM with cp.async staging (STAGING = 1: copies of the next tile
# in flight during this tile's wgmma, then each work-item rounds its chunks in local memory), which
# probe31-32's study asks for: the wgmma alone run at 358-388 TFLOP/s, the register-staged loads
# and stores alone take 750-840 us, and the two hardly overlap. Odd shapes of every layout, then
# 4096^3 NN and NT against the best mma.sync tile and CLBlast fp32.
# (The wgmma tunables DEPTH and STAGING were removed after probe33: configurations naming them are
# outside the space now; docs/NOTES.md "TF32 GEMM on the H200, fourth session" has their figures.)
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
O=.gpu/bin/ocltune
for sh in '{"m":300,"n":200,"k":100,"math":"tf32"}' '{"m":77,"n":129,"k":1000,"math":"tf32","trans_a":true}' \
          '{"m":130,"n":64,"k":33,"math":"tf32","trans_b":true}' '{"m":64,"n":300,"k":64,"math":"tf32","trans_a":true,"trans_b":true,"batch":3}'; do
  timeout 60 $O --device $OCLTUNE_GPU eval --op gemm --shape "$sh" --config WGMMA=1,BK=32,BM=64,BN=64,WGS=1,STAGING=1,DEPTH=1 \
    --config WGMMA=1,BK=16,BM=64,BN=256,WGS=1,STAGING=1,DEPTH=1 --config WGMMA=1,BK=16,BM=128,BN=256,WGS=2,STAGING=1,DEPTH=1 \
    --config WGMMA=1,BK=16,BM=128,BN=256,WGS=2,STAGING=0,DEPTH=1 > $OUT/odd.txt 2>&1
  echo "odd $sh rc=$?"; grep -E "^(ok|wrong|fail|error|compile)|rror" $OUT/odd.txt | head -6 | cut -c1-220
done
for sh in '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' '{"m":4096,"n":4096,"k":4096,"math":"tf32","trans_b":true}'; do
  OCLTUNE_BUILD_OPTIONS=-cl-nv-verbose OCLTUNE_BUILD_LOG=1 timeout 150 $O --device $OCLTUNE_GPU eval --op gemm --shape "$sh" --baseline \
    --config BK=16,BM=128,BN=128,MMA=1,WM=2,WN=2,GROUP_M=1,STAGES=0,DBUF=1,LDSM=0,BVEC=0,SWIZZLE=0,FRAG_DBUF=0 \
    --config WGMMA=1,BK=16,BM=64,BN=256,WGS=1,STAGING=0,DEPTH=1 --config WGMMA=1,BK=16,BM=64,BN=256,WGS=1,STAGING=1,DEPTH=1 \
    --config WGMMA=1,BK=16,BM=128,BN=256,WGS=2,STAGING=1,DEPTH=1 --config WGMMA=1,BK=16,BM=256,BN=128,WGS=2,STAGING=1,DEPTH=1 \
    --config WGMMA=1,BK=16,BM=128,BN=128,WGS=2,STAGING=1,DEPTH=1 --config WGMMA=1,BK=16,BM=128,BN=128,WGS=1,STAGING=1,DEPTH=1 \
    --config WGMMA=1,BK=32,BM=64,BN=128,WGS=1,STAGING=1,DEPTH=1 --config WGMMA=1,BK=16,BM=64,BN=128,WGS=1,STAGING=1,DEPTH=1 \
    --out $OUT/wgmma-cpasync-$(echo "$sh" | grep -c trans_b).json > $OUT/big.txt 2>&1
  echo "== $sh rc=$?"; grep -E "^clblast|best /" $OUT/big.txt; grep -A10 "^fastest" $OUT/big.txt | cut -c1-200
  grep -E "sm_90a\)" -A6 $OUT/big.txt | grep -E "Used|spill" | grep -v " 0 bytes spill" | cut -c1-100 | head -12
done
