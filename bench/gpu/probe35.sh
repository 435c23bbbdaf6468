# Thirty-fifth H200 run (fifth session): the wgmma GEMM on packed operands (gemm_pack_tf32.cl
# rounds A and op(B) into K-major core matrices; gemm_wgmma_packed.cl pipelines them with cp.async).
# The pack kernel's tests on the GPU, odd shapes of every layout through `ocltune eval` (each
# result verified against float64), 4096^3 NN against the best mma.sync and register-staged wgmma
# tiles and CLBlast fp32 in one process, then the tensor-core GEMM tests.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
start=$(date +%s)
OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout 60 .gpu/bin/gemm_pack_test --gtest_brief=1 > $OUT/gemm_pack_test.txt 2>&1
echo "gemm_pack_test rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $OUT/gemm_pack_test.txt | tr '\n' ' ')"
P=WGMMA_PACKED=1
for layout in '"trans_a":false,"trans_b":false' '"trans_a":true,"trans_b":true' '"trans_a":false,"trans_b":true,"batch":3'; do
  timeout 100 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm --shape "{\"m\":1000,\"n\":999,\"k\":1001,$layout,\"math\":\"tf32\"}" \
    --config $P,BM=128,BN=256,BK=8,WGS=2,STAGES=4,LAG=1 --config $P,BM=64,BN=64,BK=32,WGS=1,STAGES=2,LAG=0 \
    --config $P,BM=256,BN=128,BK=16,WGS=2,STAGES=3,LAG=1 > $OUT/odd.txt 2>&1
  echo "odd $layout rc=$?"; grep -E "^  |ok|fail|error" $OUT/odd.txt | head -8 | cut -c1-220
done
timeout 240 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' --baseline \
  --config BK=16,BM=128,BN=128,MMA=1,WM=2,WN=2,GROUP_M=1,STAGES=0,DBUF=1,LDSM=0,BVEC=0,SWIZZLE=0,FRAG_DBUF=0 \
  --config WGMMA=1,BK=16,BM=64,BN=256,WGS=1 \
  --config $P,BM=128,BN=256,BK=8,WGS=2,STAGES=4,LAG=1 --config $P,BM=128,BN=256,BK=8,WGS=2,STAGES=4,LAG=0 \
  --config $P,BM=128,BN=256,BK=16,WGS=2,STAGES=2,LAG=0 --config $P,BM=256,BN=128,BK=8,WGS=2,STAGES=4,LAG=1 \
  --config $P,BM=64,BN=256,BK=8,WGS=1,STAGES=4,LAG=1 --config $P,BM=64,BN=256,BK=8,WGS=1,STAGES=4,LAG=0 \
  --config $P,BM=128,BN=128,BK=16,WGS=1,STAGES=3,LAG=0 --config $P,BM=128,BN=128,BK=16,WGS=2,STAGES=3,LAG=1 \
  --config $P,BM=128,BN=128,BK=8,WGS=2,STAGES=4,LAG=1 --config $P,BM=64,BN=128,BK=16,WGS=1,STAGES=4,LAG=1 \
  --out $OUT/eval-4096.json > $OUT/eval-4096.txt 2>&1
echo "eval rc=$? $(( $(date +%s) - start ))s"; grep -E "^clblast|best /|TFLOP|us" $OUT/eval-4096.txt | cut -c1-220 | head -30
OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout 240 .gpu/bin/gemm_test --gtest_brief=1 --gtest_filter='GemmTf32.*' > $OUT/gemm_test.txt 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/gemm_test.txt | tr '\n' ' ' | cut -c1-200)"
grep -E "Failure|FAILED  \]|status" $OUT/gemm_test.txt | head -6 | cut -c1-300
