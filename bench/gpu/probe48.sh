# Forty-eighth H200 run (sixth session): fp16/bf16 GEMM targets (square, BERT-base linear layers
# as nn.Linear calls them, attention products, 8192^3) tuned from the defaults and seeds with
# `scripts/nightly.sh` and benchmarked against CLBlast in the same process (fp32 SGEMM: no HGEMM
# on NVIDIA's OpenCL); cuBLAS fp16/bf16 through PyTorch in the same device command.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
start=$(date +%s)
export OCLTUNE_PYTHON=$(command -v python3)
timeout 480 scripts/nightly.sh --device $OCLTUNE_GPU --bin .gpu/bin --out $OUT/n --shapes bench/gpu/targets-half.json \
  --tune-budget 300s --repetitions 3 --min-time 0.3 > $OUT/nightly.txt 2>&1
echo "nightly rc=$? $(( $(date +%s) - start ))s"; tail -3 $OUT/nightly.txt
L=$OUT/n/latest
cp $L/bench.json $OUT/bench.json; cp $L/tune.log $OUT/tune.log
cp $OUT/n/tuned.db $OUT/h200-half.db
grep -A14 "^op " $OUT/tune.log | cut -c1-260
timeout 90 python3 bench/baselines/cuda_torch_baseline.py > $OUT/torch_baseline.txt 2>&1
grep -E "cublas (float16|bfloat16)" $OUT/torch_baseline.txt | head -8
rm -rf $OUT/n
