# Twentieth H200 run: the TF32 GEMM's best tile with steps of its loop removed
# (bench/mma_ablation_bench.cpp, gemm_mma.cl's ABLATE bits).
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
OCLTUNE_BENCH_DEVICE=$OCLTUNE_GPU timeout 120 .gpu/bin/mma_ablation_bench | tee $OUT/ablation.txt
