# Twenty-seventh H200 run: is the wgmma GEMM limited by staging B, which NN stores K-strided (four
# 4-byte loads per 16-byte chunk, transposed into wgmma's K-major tile)? The same tiles on NT
# (B stored N x K: 16-byte loads, like A), against the best mma.sync tile on each layout.
# (The wgmma tunables DEPTH and STAGING were removed after probe33: configurations naming them are
# outside the space now; docs/NOTES.md "TF32 GEMM on the H200, fourth session" has their figures.)
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
O=.gpu/bin/ocltune
for sh in '{"m":4096,"n":4096,"k":4096,"math":"tf32","trans_b":true}' '{"m":4096,"n":4096,"k":4096,"math":"tf32"}'; do
  timeout 150 $O --device $OCLTUNE_GPU eval --op gemm --shape "$sh" \
    --config BK=16,BM=128,BN=128,MMA=1,WM=2,WN=2,GROUP_M=1,STAGES=0,DBUF=1,LDSM=0,BVEC=0,SWIZZLE=0,FRAG_DBUF=0 \
    --config BK=16,BM=128,BN=128,MMA=1,WM=2,WN=2,GROUP_M=1,STAGES=2,DBUF=0,LDSM=0,BVEC=0,SWIZZLE=0,FRAG_DBUF=0 \
    --config WGMMA=1,BK=16,BM=64,BN=256,WGS=1,DEPTH=1 --config WGMMA=1,BK=16,BM=128,BN=256,WGS=2,DEPTH=2 \
    --config WGMMA=1,BK=16,BM=128,BN=128,WGS=2,DEPTH=1 --config WGMMA=1,BK=32,BM=64,BN=128,WGS=1,DEPTH=1 > $OUT/layout.txt 2>&1
  echo "== $sh rc=$?"; grep -A8 "^fastest" $OUT/layout.txt | cut -c1-200
done
