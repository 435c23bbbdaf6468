# First H200 probe: correctness of GEMM on the NVIDIA driver, a sample of big-tile configurations
# at 4096^3 next to CLBlast, register reports, and the cuBLAS/cuDNN reference figures.
set -u
. bench/gpu/env.sh
$OCLTUNE devices > $OUT/devices.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/nvidia-smi.txt
OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout 150 build-gpu/tests/gemm_test --gtest_brief=1 2>&1 | tail -15 > $OUT/gemm_test.txt
S='{"m":4096,"n":4096,"k":4096}'
HAND="--config MWG=128,NWG=128,KWG=8,WPTM=8,WPTN=8,VWM=4,VWN=4,VWL=4,SA=1,SB=1,DB=1,KWI=8
 --config MWG=128,NWG=128,KWG=16,WPTM=8,WPTN=8,VWM=4,VWN=4,VWL=4,SA=1,SB=1,DB=1,KWI=8
 --config MWG=128,NWG=128,KWG=8,WPTM=8,WPTN=8,VWM=4,VWN=4,VWL=4,SA=1,SB=1,DB=0,KWI=8
 --config MWG=128,NWG=256,KWG=8,WPTM=8,WPTN=16,VWM=4,VWN=4,VWL=4,SA=1,SB=1,DB=1,KWI=8
 --config MWG=256,NWG=128,KWG=8,WPTM=16,WPTN=8,VWM=4,VWN=4,VWL=4,SA=1,SB=1,DB=1,KWI=8
 --config MWG=64,NWG=128,KWG=16,WPTM=4,WPTN=8,VWM=4,VWN=4,VWL=4,SA=1,SB=1,DB=1,KWI=8
 --config MWG=128,NWG=64,KWG=16,WPTM=8,WPTN=4,VWM=4,VWN=4,VWL=4,SA=1,SB=1,DB=1,KWI=8
 --config MWG=64,NWG=64,KWG=16,WPTM=4,WPTN=4,VWM=4,VWN=4,VWL=4,SA=1,SB=1,DB=1,KWI=8"
OCLTUNE_BUILD_OPTIONS=-cl-nv-verbose OCLTUNE_BUILD_LOG=1 timeout 120 $OCLTUNE eval --device $OCLTUNE_GPU --op gemm --shape "$S" $HAND --baseline --out $OUT/hand4096.json > $OUT/hand4096.txt 2> $OUT/hand4096.log
tail -12 $OUT/hand4096.txt
timeout 200 $OCLTUNE eval --device $OCLTUNE_GPU --op gemm --shape "$S" --sample 70 --seed 5 --restrict SA=1,SB=1,VWL=4 --out $OUT/sample4096.json > $OUT/sample4096.txt 2>&1
tail -10 $OUT/sample4096.txt
timeout 120 $OCLTUNE --device $OCLTUNE_GPU --ops gemm --shapes quick --max-evals 4 --db $OUT/quick.db > $OUT/tune_quick.txt 2>&1; echo "tune quick rc=$?"
timeout 150 python3 bench/baselines/cuda_torch_baseline.py > $OUT/torch_baseline.txt 2>&1
grep -E "fp32 n=4096|fp32 n=1024|copy" $OUT/torch_baseline.txt
cat $OUT/gemm_test.txt | tail -3
