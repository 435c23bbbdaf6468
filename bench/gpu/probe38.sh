# Thirty-eighth H200 run (fifth session): packing passes of 64 x 64 blocks (16 loads in flight per
# work-item; probe37's 32 x 32 blocks of 4 loads left im2col far behind). The pack tests (whole
# binary: probe35-37's exit crash was the test's own heap overflow, now fixed), the packed GEMM
# kernel by kernel, 4096^3 NN and the ResNet-50 layers through `ocltune eval`, then the tensor-core
# conv2d and GEMM tests.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
start=$(date +%s)
export OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU
timeout 30 .gpu/bin/gemm_pack_test --gtest_brief=1 > $OUT/gemm_pack_test.txt 2>&1
echo "gemm_pack_test rc=$? $(grep -E '^\[  (PASSED|FAILED) ' $OUT/gemm_pack_test.txt | tr '\n' ' ')"
export OCLTUNE_BENCH_DEVICE=$OCLTUNE_GPU
timeout 100 .gpu/bin/mma_ablation_bench > $OUT/ablation.txt 2>&1; echo "ablation rc=$?"; grep -A5 "kernel by kernel" $OUT/ablation.txt
P=WGMMA_PACKED=1
timeout 120 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' --baseline \
  --config $P,BM=128,BN=128,BK=16,WGS=1,STAGES=3,LAG=0 --config $P,BM=128,BN=128,BK=16,WGS=2,STAGES=3,LAG=0 \
  --config $P,BM=64,BN=256,BK=8,WGS=1,STAGES=4,LAG=0 --config $P,BM=128,BN=256,BK=8,WGS=2,STAGES=4,LAG=0 \
  --config $P,BM=128,BN=128,BK=32,WGS=1,STAGES=2,LAG=0 --config $P,BM=128,BN=128,BK=8,WGS=1,STAGES=4,LAG=0 \
  --out $OUT/eval-4096.json > $OUT/eval-4096.txt 2>&1
echo "eval rc=$? $(( $(date +%s) - start ))s"; grep -E "^clblast|best /" $OUT/eval-4096.txt; grep -A6 "^fastest" $OUT/eval-4096.txt | cut -c1-200
I=ALGO=6
ev() {  # name, shape, configs...
  local name=$1 shape=$2; shift 2
  local flags=(); for c in "$@"; do flags+=(--config "$c"); done
  timeout 120 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op conv2d --shape "$shape" "${flags[@]}" --out $OUT/$name.json > $OUT/$name.txt 2>&1
  echo "$name rc=$? $(( $(date +%s) - start ))s"; grep -A5 "^fastest" $OUT/$name.txt | cut -c1-200
}
W=ALGO=2,KWG=16,MWG=64,NWG=128,SA=0,VWL=1,VWN=2,WINO_M=4,WINO_TPI=1,WINO_WG=256,WPTM=8,WPTN=8,WTN=0
ev c64 '{"op":"conv2d","n":32,"c":64,"h":56,"w":56,"k":64,"r":3,"s":3,"pad":1,"math":"tf32"}' $W \
  $I,BM=64,BN=128,BK=16,WGS=1,STAGES=3,LAG=0 $I,BM=64,BN=64,BK=32,WGS=1,STAGES=3,LAG=0 $I,BM=64,BN=256,BK=8,WGS=1,STAGES=4,LAG=0
ev c256-1x1 '{"op":"conv2d","n":32,"c":256,"h":56,"w":56,"k":64,"r":1,"s":1,"math":"tf32"}' \
  ALGO=3,BK=32,BM=64,BN=64,BVEC=0,DBUF=1,FRAG_DBUF=0,GROUP_M=1,LDSM=0,MMA=1,STAGES=0,SWIZZLE=0,WM=4,WN=1 \
  $I,BM=64,BN=128,BK=16,WGS=1,STAGES=3,LAG=0 $I,BM=64,BN=64,BK=32,WGS=1,STAGES=3,LAG=0
ev c128 '{"op":"conv2d","n":32,"c":128,"h":28,"w":28,"k":128,"r":3,"s":3,"pad":1,"math":"tf32"}' ${W/VWL=1/VWL=4} \
  $I,BM=128,BN=128,BK=16,WGS=2,STAGES=3,LAG=0 $I,BM=64,BN=128,BK=16,WGS=1,STAGES=3,LAG=0 $I,BM=128,BN=64,BK=32,WGS=1,STAGES=2,LAG=0
ev c512 '{"op":"conv2d","n":32,"c":512,"h":7,"w":7,"k":512,"r":3,"s":3,"pad":1,"math":"tf32"}' \
  ALGO=2,KWG=16,MWG=64,NWG=128,SA=1,VWL=4,VWN=2,WINO_M=4,WINO_TPI=1,WINO_WG=64,WPTM=8,WPTN=8,WTN=0 \
  $I,BM=64,BN=64,BK=32,WGS=1,STAGES=3,LAG=0 $I,BM=128,BN=64,BK=32,WGS=1,STAGES=2,LAG=0 $I,BM=64,BN=64,BK=16,WGS=1,STAGES=4,LAG=0
timeout 150 .gpu/bin/conv2d_test --gtest_brief=1 --gtest_filter='Conv2dTf32.*' > $OUT/conv2d_test.txt 2>&1
echo "conv2d_test rc=$? $(( $(date +%s) - start ))s"; grep -E "Failure|FAILED|PASSED|status" $OUT/conv2d_test.txt | head -6 | cut -c1-300
timeout 200 .gpu/bin/gemm_test --gtest_brief=1 --gtest_filter='GemmTf32.*' > $OUT/gemm_test.txt 2>&1
echo "gemm_test rc=$? $(( $(date +%s) - start ))s"; grep -E "Failure|FAILED|PASSED|status" $OUT/gemm_test.txt | head -6 | cut -c1-300
