# Seventeenth H200 run: TF32 GEMM with 64x64 warp tiles in small work-groups (one or two warps), so
# that several work-groups per SM each run a deeper cp.async pipeline within 48 KiB of local memory.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
m=MMA=1,LDSM=0,BVEC=0,GROUP_M=1
timeout 200 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' --baseline \
  --config BM=128,BN=128,BK=16,WM=2,WN=2,STAGES=0,DBUF=1,$m \
  --config BM=128,BN=64,BK=16,WM=2,WN=1,STAGES=3,DBUF=0,$m --config BM=64,BN=128,BK=16,WM=1,WN=2,STAGES=3,DBUF=0,$m \
  --config BM=64,BN=128,BK=16,WM=1,WN=2,STAGES=2,DBUF=0,$m --config BM=128,BN=64,BK=16,WM=2,WN=1,STAGES=0,DBUF=1,$m \
  --config BM=64,BN=64,BK=32,WM=1,WN=1,STAGES=2,DBUF=0,$m --config BM=64,BN=64,BK=16,WM=1,WN=1,STAGES=4,DBUF=0,$m \
  > $OUT/tf32-small-groups.txt 2>&1
echo "eval rc=$?"; tail -12 $OUT/tf32-small-groups.txt | cut -c1-200
