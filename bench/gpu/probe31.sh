# Thirty-first H200 run: which step of the wgmma GEMM's loop limits it (bench/mma_ablation_bench:
# loads, stores, wgmma and barrier removed in turn from the 64x256 tile; mma.sync's study again for
# reference).
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
OCLTUNE_BENCH_DEVICE=$OCLTUNE_GPU timeout 200 .gpu/bin/mma_ablation_bench | tee $OUT/ablation.txt
