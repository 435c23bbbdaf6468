# Forty-second H200 run (fifth session): the packed wgmma GEMM in every storage layout at 4096^3
# (the packing pass absorbs the transposition), against the best mma.sync tile and CLBlast fp32 in
# the same `ocltune eval` per layout.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
for layout in NN NT TN TT; do
  ta=false; tb=false; [ ${layout:0:1} = T ] && ta=true; [ ${layout:1:1} = T ] && tb=true
  timeout 100 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm \
    --shape "{\"m\":4096,\"n\":4096,\"k\":4096,\"trans_a\":$ta,\"trans_b\":$tb,\"math\":\"tf32\"}" --baseline \
    --config BK=16,BM=128,BN=128,MMA=1,WM=2,WN=2,GROUP_M=1,STAGES=0,DBUF=1,LDSM=0,BVEC=0,SWIZZLE=0,FRAG_DBUF=0 \
    --config WGMMA_PACKED=1,BM=128,BN=128,BK=16,WGS=2,STAGES=3,LAG=0 --config WGMMA_PACKED=1,BM=128,BN=128,BK=16,WGS=1,STAGES=3,LAG=0 \
    --out $OUT/eval-$layout.json > $OUT/eval-$layout.txt 2>&1
  echo "$layout rc=$?"; grep -E "^ok|^clblast|best /" $OUT/eval-$layout.txt | cut -c1-160
done
