# Twenty-eighth H200 run: the wgmma GEMM after its staging reads whole sectors (8 rows x 4 chunks
# per warp instead of 32 rows x 1 chunk): odd shapes of every layout, then 4096^3 NN and NT.
# (The wgmma tunables DEPTH and STAGING were removed after probe33: configurations naming them are
# outside the space now; docs/NOTES.md "TF32 GEMM on the H200, fourth session" has their figures.)
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
O=.gpu/bin/ocltune
for sh in '{"m":300,"n":200,"k":100,"math":"tf32"}' '{"m":77,"n":129,"k":1000,"math":"tf32","trans_a":true}' \
          '{"m":130,"n":64,"k":33,"math":"tf32","trans_b":true}' '{"m":64,"n":300,"k":64,"math":"tf32","trans_a":true,"trans_b":true,"batch":3}'; do
  timeout 60 $O --device $OCLTUNE_GPU eval --op gemm --shape "$sh" --config WGMMA=1,BK=32,BM=64,BN=64,WGS=1,DEPTH=2 \
    --config WGMMA=1,BK=16,BM=64,BN=256,WGS=1,DEPTH=1 --config WGMMA=1,BK=16,BM=128,BN=256,WGS=2,DEPTH=2 > $OUT/odd.txt 2>&1
  echo "odd $sh rc=$?"; grep -E "^(ok|wrong|fail|error|compile)|rror" $OUT/odd.txt | head -6 | cut -c1-220
done
for sh in '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' '{"m":4096,"n":4096,"k":4096,"math":"tf32","trans_b":true}'; do
  timeout 150 $O --device $OCLTUNE_GPU eval --op gemm --shape "$sh" --baseline \
    --config BK=16,BM=128,BN=128,MMA=1,WM=2,WN=2,GROUP_M=1,STAGES=0,DBUF=1,LDSM=0,BVEC=0,SWIZZLE=0,FRAG_DBUF=0 \
    --config WGMMA=1,BK=16,BM=64,BN=256,WGS=1,DEPTH=1 --config WGMMA=1,BK=16,BM=64,BN=256,WGS=1,DEPTH=2 \
    --config WGMMA=1,BK=16,BM=128,BN=256,WGS=2,DEPTH=1 --config WGMMA=1,BK=16,BM=128,BN=256,WGS=2,DEPTH=2 \
    --config WGMMA=1,BK=16,BM=128,BN=128,WGS=2,DEPTH=2 --config WGMMA=1,BK=32,BM=64,BN=128,WGS=1,DEPTH=1 \
    --config WGMMA=1,BK=16,BM=128,BN=128,WGS=1,DEPTH=2 --config WGMMA=1,BK=16,BM=256,BN=128,WGS=2,DEPTH=1 \
    --out $OUT/wgmma-$(echo "$sh" | grep -c trans_b).json > $OUT/layout.txt 2>&1
  echo "== $sh rc=$?"; grep -E "^clblast|best /" $OUT/layout.txt; grep -A10 "^fastest" $OUT/layout.txt | cut -c1-200
done
