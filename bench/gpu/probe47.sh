# Forty-seventh H200 run (sixth session): mma.sync on packed operands (m16n8k16 fp16/bf16, m16n8k8
# TF32) in the tensor-core GEMM tests (covering samples of both packed variants, every layout, the
# odd-size table), conv2d's im2col after the pipeline moved to packed_pipeline.cl, then 4096^3
# fp16 and tf32 through `ocltune eval`: mma.sync against wgmma on the same packed operands, CLBlast
# (fp32 SGEMM for fp16: NVIDIA's OpenCL has no cl_khr_fp16) in the same process.
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
t gemm_half_test '*' 240
t gemm_test 'GemmTf32.*' 240
t conv2d_test 'Conv2dTf32.*' 200
P=WGMMA_PACKED=1
M=MMA_PACKED=1
for shape in '"dtype":"fp16"' '"math":"tf32"'; do
  name=$(echo $shape | tr -dc 'a-z0-9')
  timeout 150 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm --shape "{\"m\":4096,\"n\":4096,\"k\":4096,$shape}" --baseline \
    --config $P,BM=128,BN=128,BK=16,WGS=1,STAGES=3,LAG=0,GROUP_M=1 \
    --config $M,BM=128,BN=128,BK=16,WM=2,WN=2,STAGES=3,GROUP_M=1 --config $M,BM=128,BN=128,BK=8,WM=2,WN=2,STAGES=4,GROUP_M=8 \
    --config $M,BM=128,BN=256,BK=8,WM=2,WN=4,STAGES=3,GROUP_M=8 --config $M,BM=256,BN=128,BK=8,WM=4,WN=2,STAGES=3,GROUP_M=8 \
    --config $M,BM=128,BN=128,BK=16,WM=4,WN=2,STAGES=3,GROUP_M=8 --config $M,BM=64,BN=128,BK=16,WM=2,WN=2,STAGES=4,GROUP_M=8 \
    --config $M,BM=128,BN=64,BK=32,WM=2,WN=2,STAGES=2,GROUP_M=8 \
    --out $OUT/eval-$name.json > $OUT/eval-$name.txt 2>&1
  echo "eval $name rc=$? $(( $(date +%s) - start ))s"; grep -E "^clblast|best /|^error|^wrong|^fail" $OUT/eval-$name.txt | cut -c1-200; grep -A8 "^fastest" $OUT/eval-$name.txt | cut -c1-200
done
