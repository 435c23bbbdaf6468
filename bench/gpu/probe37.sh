# Thirty-seventh H200 run (fifth session): conv2d's im2col_gemm_tf32 algorithm (each image's im2col
# matrix packed for the wgmma GEMM on packed operands). The tensor-core conv2d tests (every
# direction on odd shapes; the new algorithm in forward), gemm_pack_test one test at a time (the
# whole binary segfaulted at exit in probe35/36 after passing), then the four ResNet-50 layers of
# targets-tf32.json through `ocltune eval`: probe36's tuned winners against im2col configurations.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
start=$(date +%s)
export OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU
for t in RoundingModelMatchesCvtRna KContiguousOperandOnOddShape PlanPacksASharedOperandOnce; do
  timeout 30 .gpu/bin/gemm_pack_test --gtest_brief=1 --gtest_filter="GemmPack.$t" > $OUT/pack-$t.txt 2>&1
  echo "gemm_pack_test $t rc=$?"
done
timeout 200 .gpu/bin/conv2d_test --gtest_brief=1 --gtest_filter='Conv2dTf32.*' > $OUT/conv2d_test.txt 2>&1
echo "conv2d_test rc=$? $(( $(date +%s) - start ))s"; grep -E "Failure|FAILED|PASSED|status" $OUT/conv2d_test.txt | head -6 | cut -c1-300
unset OCLTUNE_TEST_DEVICE
I=ALGO=6
ev() {  # name, shape, configs...
  local name=$1 shape=$2; shift 2
  local flags=(); for c in "$@"; do flags+=(--config "$c"); done
  timeout 120 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op conv2d --shape "$shape" "${flags[@]}" --out $OUT/$name.json > $OUT/$name.txt 2>&1
  echo "$name rc=$? $(( $(date +%s) - start ))s"; grep -A12 "^fastest" $OUT/$name.txt | cut -c1-200
}
W=ALGO=2,KWG=16,MWG=64,NWG=128,SA=0,VWL=1,VWN=2,WINO_M=4,WINO_TPI=1,WINO_WG=256,WPTM=8,WPTN=8,WTN=0
ev c64 '{"op":"conv2d","n":32,"c":64,"h":56,"w":56,"k":64,"r":3,"s":3,"pad":1,"math":"tf32"}' $W \
  $I,BM=64,BN=128,BK=16,WGS=1,STAGES=3,LAG=0 $I,BM=64,BN=256,BK=8,WGS=1,STAGES=4,LAG=0 $I,BM=64,BN=128,BK=8,WGS=1,STAGES=4,LAG=0 \
  $I,BM=64,BN=256,BK=16,WGS=1,STAGES=2,LAG=0 $I,BM=64,BN=64,BK=32,WGS=1,STAGES=3,LAG=0
ev c256-1x1 '{"op":"conv2d","n":32,"c":256,"h":56,"w":56,"k":64,"r":1,"s":1,"math":"tf32"}' \
  ALGO=3,BK=32,BM=64,BN=64,BVEC=0,DBUF=1,FRAG_DBUF=0,GROUP_M=1,LDSM=0,MMA=1,STAGES=0,SWIZZLE=0,WM=4,WN=1 \
  $I,BM=64,BN=128,BK=16,WGS=1,STAGES=3,LAG=0 $I,BM=64,BN=256,BK=8,WGS=1,STAGES=4,LAG=0
ev c128 '{"op":"conv2d","n":32,"c":128,"h":28,"w":28,"k":128,"r":3,"s":3,"pad":1,"math":"tf32"}' \
  ${W/VWL=1/VWL=4} $I,BM=128,BN=128,BK=16,WGS=1,STAGES=3,LAG=0 $I,BM=128,BN=128,BK=16,WGS=2,STAGES=3,LAG=0 \
  $I,BM=64,BN=256,BK=8,WGS=1,STAGES=4,LAG=0 $I,BM=128,BN=256,BK=8,WGS=2,STAGES=4,LAG=0 $I,BM=64,BN=128,BK=16,WGS=1,STAGES=3,LAG=0
ev c512 '{"op":"conv2d","n":32,"c":512,"h":7,"w":7,"k":512,"r":3,"s":3,"pad":1,"math":"tf32"}' \
  ALGO=2,KWG=16,MWG=64,NWG=128,SA=1,VWL=4,VWN=2,WINO_M=4,WINO_TPI=1,WINO_WG=64,WPTM=8,WPTN=8,WTN=0 \
  $I,BM=128,BN=64,BK=16,WGS=1,STAGES=3,LAG=0 $I,BM=64,BN=64,BK=16,WGS=1,STAGES=3,LAG=0 $I,BM=64,BN=64,BK=32,WGS=1,STAGES=3,LAG=0 \
  $I,BM=256,BN=64,BK=16,WGS=2,STAGES=3,LAG=0 $I,BM=128,BN=64,BK=32,WGS=2,STAGES=2,LAG=0
