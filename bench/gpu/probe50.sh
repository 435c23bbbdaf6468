# Fiftieth H200 run (sixth session): the kernels of the GEMM variants on packed operands timed one
# by one (`mma_ablation_bench --packed-only`): the TF32 and 16-bit packing passes (GB/s) and the
# wgmma and mma.sync GEMMs, TF32 and fp16, 4096^3.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
export OCLTUNE_BENCH_DEVICE=$OCLTUNE_GPU
timeout 200 .gpu/bin/mma_ablation_bench --packed-only > $OUT/packed-kernels.txt 2>&1; echo "rc=$?"; cat $OUT/packed-kernels.txt
