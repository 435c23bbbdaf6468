# Eighteenth H200 run: the device's ceilings, TF32 mma.sync included (`ocltune ceilings`), twice.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
for i in 1 2; do timeout 60 .gpu/bin/ocltune --device $OCLTUNE_GPU ceilings; done | tee $OUT/ceilings.txt
