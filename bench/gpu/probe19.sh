# Nineteenth H200 run: TF32 mma.sync rate against occupancy and independent chains per warp
# (bench/mma_peak_bench.cpp).
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
OCLTUNE_BENCH_DEVICE=$OCLTUNE_GPU timeout 150 .gpu/bin/mma_peak_bench | tee $OUT/mma-peak.txt
