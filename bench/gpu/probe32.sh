# Thirty-second H200 run: (1) the loop-step study of the wgmma GEMM for the 128x256 tile of two
# warpgroups next to the 64x256 one; (2) whether cuBLAS's TF32 GEMM rounds or truncates its
# operands (bench/gpu/tf32_rounding.py).
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
OCLTUNE_BENCH_DEVICE=$OCLTUNE_GPU timeout 200 .gpu/bin/mma_ablation_bench | tee $OUT/ablation.txt
timeout 120 python3 bench/gpu/tf32_rounding.py | tee $OUT/tf32_rounding.txt
