# Forty-fourth H200 run (fifth session): GROUP_M launch order for the packed wgmma GEMM (as
# gemm_mma.cl has it): at 4096^3 the packed B (64 MiB) exceeds the 50 MB L2, so work-groups resident
# together covering a band of tile rows might read B panels from DRAM less often.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
P=WGMMA_PACKED=1
for n in 4096 8192; do
  timeout 150 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm --shape "{\"m\":$n,\"n\":$n,\"k\":$n,\"math\":\"tf32\"}" \
    --config $P,BM=128,BN=128,BK=16,WGS=2,STAGES=3,LAG=0,GROUP_M=1 --config $P,BM=128,BN=128,BK=16,WGS=2,STAGES=3,LAG=0,GROUP_M=8 \
    --config $P,BM=128,BN=128,BK=8,WGS=1,STAGES=4,LAG=0,GROUP_M=1 --config $P,BM=128,BN=128,BK=8,WGS=1,STAGES=4,LAG=0,GROUP_M=8 \
    --out $OUT/eval-$n.json > $OUT/eval-$n.txt 2>&1
  echo "$n rc=$?"; grep -E "^ok|^wrong|^error|skipping" $OUT/eval-$n.txt | cut -c1-160
done
