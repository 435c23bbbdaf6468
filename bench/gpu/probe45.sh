# Forty-fifth H200 run (fifth session): GROUP_M = 8 of the packed wgmma GEMM where the last band
# of tile rows is partial (odd shapes, batches, every layout through `ocltune eval`, each result
# verified against float64), conv2d's im2col with it, then the tensor-core GEMM tests (a covering
# sample of the packed variant, GROUP_M included).
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
P=WGMMA_PACKED=1
for layout in '"trans_a":false,"trans_b":true' '"trans_a":true,"trans_b":false,"batch":2'; do
  timeout 60 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm --shape "{\"m\":1500,\"n\":1000,\"k\":333,$layout,\"math\":\"tf32\"}" \
    --config $P,BM=128,BN=128,BK=8,WGS=1,STAGES=4,LAG=0,GROUP_M=8 --config $P,BM=64,BN=64,BK=32,WGS=1,STAGES=3,LAG=1,GROUP_M=8 \
    --out $OUT/odd.json > $OUT/odd.txt 2>&1
  echo "odd $layout rc=$?"; grep -E "^ok|^wrong|^error|^fail|skipping" $OUT/odd.txt | cut -c1-160
done
timeout 60 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op conv2d \
  --shape '{"op":"conv2d","n":3,"c":130,"h":9,"w":11,"k":300,"r":3,"s":3,"pad":1,"bias":true,"act":"relu","math":"tf32"}' \
  --config ALGO=6,BM=64,BN=64,BK=32,WGS=1,STAGES=3,LAG=0,GROUP_M=8 --out $OUT/conv.json > $OUT/conv.txt 2>&1
echo "conv rc=$?"; grep -E "^ok|^wrong|^error|^fail|skipping" $OUT/conv.txt | cut -c1-160
OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout 200 .gpu/bin/gemm_test --gtest_brief=1 --gtest_filter='GemmTf32.*' > $OUT/gemm_test.txt 2>&1
echo "gemm_test rc=$?"; grep -E "Failure|FAILED|PASSED|status" $OUT/gemm_test.txt | head -6 | cut -c1-300
