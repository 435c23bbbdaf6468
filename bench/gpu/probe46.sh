# Forty-sixth H200 run (sixth session): the tensor-core GEMM tests after tile_order.cl's extraction
# (verified offline only at the end of the fifth session), the fp16/bf16 GEMM tests (packed wgmma
# on 16-bit operands, fp32 kernels through widened copies, CLBlast HGEMM as the runtime fallback),
# then fp16/bf16 GEMM 4096^3 through `ocltune eval` (CLBlast HGEMM as the same-process baseline)
# and cuBLAS fp16/bf16 through PyTorch in the same command.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
start=$(date +%s)
export OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU
t() {  # binary, filter, timeout
  timeout $3 .gpu/bin/$1 --gtest_brief=1 --gtest_filter="$2" > $OUT/$1.txt 2>&1
  echo "$1 $2 rc=$? $(( $(date +%s) - start ))s $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' $OUT/$1.txt | tr '\n' ' ')"
  grep -E "Failure|error" -A3 $OUT/$1.txt | head -12 | cut -c1-300
}
t gemm_pack_test '*' 30
t gemm_half_test '*' 200
t gemm_test 'GemmTf32.*' 200
t runtime_test 'RuntimeGemm.*:RuntimeLookup.Clblast*' 60
P=WGMMA_PACKED=1
for dt in fp16 bf16; do
  timeout 120 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm --shape "{\"m\":4096,\"n\":4096,\"k\":4096,\"dtype\":\"$dt\"}" --baseline \
    --config $P,BM=128,BN=128,BK=16,WGS=1,STAGES=3,LAG=0,GROUP_M=1 --config $P,BM=128,BN=256,BK=16,WGS=2,STAGES=3,LAG=0,GROUP_M=8 \
    --config $P,BM=128,BN=128,BK=32,WGS=1,STAGES=3,LAG=0,GROUP_M=8 --config $P,BM=128,BN=256,BK=8,WGS=2,STAGES=4,LAG=0,GROUP_M=8 \
    --config $P,BM=128,BN=128,BK=16,WGS=2,STAGES=4,LAG=1,GROUP_M=8 --config $P,BM=64,BN=256,BK=16,WGS=1,STAGES=4,LAG=0,GROUP_M=8 \
    --config $P,BM=256,BN=128,BK=16,WGS=2,STAGES=3,LAG=0,GROUP_M=8 \
    --out $OUT/eval-$dt.json > $OUT/eval-$dt.txt 2>&1
  echo "eval $dt rc=$? $(( $(date +%s) - start ))s"; grep -E "^clblast|best /|^error|^wrong" $OUT/eval-$dt.txt | cut -c1-200; grep -A7 "^fastest" $OUT/eval-$dt.txt | cut -c1-200
done
timeout 200 python3 bench/baselines/cuda_torch_baseline.py > $OUT/torch.txt 2>&1; echo "torch rc=$?"; grep -E "cublas (tf32|float16|bfloat16) n=(4096|8192)" $OUT/torch.txt
