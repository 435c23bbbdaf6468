# Thirtieth H200 run: the wgmma kernel appended to gemm_layout.cl (operand indexing shared with
# gemm.cl and gemm_cpu.cl) on odd shapes of every layout, and 4096^3 once more.
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
timeout 100 $O --device $OCLTUNE_GPU eval --op gemm --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' \
  --config WGMMA=1,BK=16,BM=64,BN=256,WGS=1,DEPTH=1 --config BK=16,BM=128,BN=128,MMA=1,WM=2,WN=2,GROUP_M=1,STAGES=0,DBUF=1,LDSM=0,BVEC=0,SWIZZLE=0,FRAG_DBUF=0 \
  > $OUT/big.txt 2>&1
echo "big rc=$?"; grep -A3 "^fastest" $OUT/big.txt | cut -c1-200
