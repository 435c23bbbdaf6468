# Forty-first H200 run (fifth session): TF32 GEMM beyond 4096^3, tuned from the defaults and seeds
# as PyTorch calls them: BERT-base (batch 8 x 512 tokens) linear layers (x W^T: NT), the attention
# products (96 batched 512 x 512 x 64 NT and 512 x 64 x 512 NN), and 8192^3; benchmarked against
# CLBlast fp32 in the same process, cuBLAS TF32 (square sizes) in the same device command.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
start=$(date +%s)
export OCLTUNE_PYTHON=$(command -v python3)
timeout 500 scripts/nightly.sh --device $OCLTUNE_GPU --bin .gpu/bin --out $OUT/n --shapes bench/gpu/targets-tf32-bert.json \
  --tune-budget 300s --repetitions 3 --min-time 0.3 > $OUT/nightly.txt 2>&1
echo "nightly rc=$? $(( $(date +%s) - start ))s"; tail -3 $OUT/nightly.txt
L=$OUT/n/latest
cp $L/bench.json $OUT/bench.json; cp $L/tune.log $OUT/tune.log
cp $OUT/n/tuned.db $OUT/h200-tf32-bert.db
grep -A12 "^op " $OUT/tune.log | cut -c1-260
timeout 60 python3 bench/baselines/cuda_torch_baseline.py > $OUT/torch_baseline.txt 2>&1
grep -E "cublas tf32" $OUT/torch_baseline.txt | head -8
rm -rf $OUT/n
