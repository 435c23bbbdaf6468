# Twenty-fifth and twenty-sixth H200 runs (26: one wgmma group left in flight across each barrier; DEPTH was removed after probe33): the wgmma GEMM with DEPTH (tiles loaded ahead into registers), without a
# memory clobber on wgmma and with the accumulators fenced; ptxas's advice for the retargeted
# (sm_90a) builds. (1) odd shapes of all layouts with DEPTH = 2; (2) 4096^3 tiles.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
O=.gpu/bin/ocltune
for sh in '{"m":300,"n":200,"k":100,"math":"tf32"}' '{"m":77,"n":129,"k":1000,"math":"tf32","trans_a":true}' \
          '{"m":130,"n":64,"k":33,"math":"tf32","trans_b":true}' '{"m":64,"n":300,"k":64,"math":"tf32","trans_a":true,"trans_b":true,"batch":3}'; do
  timeout 60 $O --device $OCLTUNE_GPU eval --op gemm --shape "$sh" --config WGMMA=1,BK=32,BM=64,BN=64,WGS=1,DEPTH=2 \
    --config WGMMA=1,BK=16,BM=64,BN=256,WGS=1,DEPTH=2 --config WGMMA=1,BK=16,BM=128,BN=256,WGS=2,DEPTH=2 > $OUT/odd.txt 2>&1
  echo "odd $sh rc=$?"; grep -E "^(ok|wrong|fail|error|compile)|rror" $OUT/odd.txt | head -6 | cut -c1-220
done
OCLTUNE_BINARY_CACHE=off OCLTUNE_BUILD_OPTIONS=-cl-nv-verbose OCLTUNE_BUILD_LOG=1 timeout 240 $O --device $OCLTUNE_GPU eval --op gemm \
  --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' --baseline \
  --config BK=16,BM=128,BN=128,MMA=1,WM=2,WN=2,GROUP_M=1,STAGES=0,DBUF=1,LDSM=0,BVEC=0,SWIZZLE=0,FRAG_DBUF=0 \
  --config WGMMA=1,BK=16,BM=64,BN=256,WGS=1,DEPTH=1 --config WGMMA=1,BK=16,BM=64,BN=256,WGS=1,DEPTH=2 \
  --config WGMMA=1,BK=16,BM=128,BN=256,WGS=2,DEPTH=1 --config WGMMA=1,BK=16,BM=128,BN=256,WGS=2,DEPTH=2 \
  --config WGMMA=1,BK=16,BM=128,BN=128,WGS=2,DEPTH=2 --config WGMMA=1,BK=32,BM=64,BN=128,WGS=1,DEPTH=2 \
  --config WGMMA=1,BK=16,BM=256,BN=128,WGS=2,DEPTH=2 --config WGMMA=1,BK=16,BM=128,BN=128,WGS=1,DEPTH=2 \
  --out $OUT/wgmma-depth.json > $OUT/wgmma-depth.txt 2>&1
echo "eval rc=$?"; grep -E "ptxas info *: Used|spill stores|Potential|serializ|sm_90a\)" $OUT/wgmma-depth.txt | grep -v " 0 bytes spill" | cut -c1-200 | head -30
grep -vE "ptxas|^ *$|build log|Warning" $OUT/wgmma-depth.txt | tail -13 | cut -c1-220
