# Third H200 probe: the TF32 tensor-core variant (correctness over the odd-size table, speed at
# 4096^3), fp32 configurations around the best so far, and the BERT-base shapes next to CLBlast.
set -u
. bench/gpu/env.sh
OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout 200 build-gpu/tests/gemm_test --gtest_brief=1 --gtest_filter='GemmTf32*:GemmSpace*:Table/*' > $OUT/gemm_test.txt 2>&1
grep -E "FAILED|PASSED|SKIPPED|Failure" $OUT/gemm_test.txt | head -6
E="timeout 150 $OCLTUNE eval --device $OCLTUNE_GPU --op gemm"
$E --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' --baseline --out $OUT/tf32.json \
  --config MMA=1,BM=128,BN=128,BK=16,WM=2,WN=4,DBUF=1 --config MMA=1,BM=128,BN=256,BK=16,WM=2,WN=4,DBUF=1 \
  --config MMA=1,BM=256,BN=128,BK=16,WM=4,WN=2,DBUF=1 --config MMA=1,BM=128,BN=128,BK=32,WM=2,WN=4,DBUF=0 \
  --config MMA=1,BM=128,BN=128,BK=16,WM=2,WN=2,DBUF=1 --config MMA=1,BM=64,BN=128,BK=16,WM=2,WN=2,DBUF=1 \
  --config MMA=1,BM=128,BN=64,BK=32,WM=2,WN=2,DBUF=0 --config MMA=1,BM=64,BN=64,BK=16,WM=2,WN=2,DBUF=1 \
  --config MMA=1,BM=256,BN=128,BK=8,WM=4,WN=2,DBUF=1 --config MMA=1,BM=128,BN=256,BK=8,WM=2,WN=4,DBUF=1 > $OUT/tf32.txt 2>&1
cut -c1-130 $OUT/tf32.txt | tail -16
C="VWM=4,VWN=4,VWL=4,SA=1,SB=1"
F="--config MWG=128,NWG=256,KWG=8,WPTM=8,WPTN=16,$C,DB=1,KWI=8 --config MWG=128,NWG=256,KWG=16,WPTM=8,WPTN=16,$C,DB=1,KWI=8
 --config MWG=256,NWG=128,KWG=16,WPTM=16,WPTN=8,$C,DB=1,KWI=8 --config MWG=128,NWG=256,KWG=8,WPTM=8,WPTN=16,$C,DB=1,KWI=2
 --config MWG=128,NWG=256,KWG=16,WPTM=8,WPTN=16,$C,DB=0,KWI=8 --config MWG=64,NWG=256,KWG=8,WPTM=16,WPTN=8,VWM=2,VWN=4,VWL=4,SA=1,SB=1,DB=1,KWI=2
 --config MWG=128,NWG=128,KWG=16,WPTM=8,WPTN=8,$C,DB=0,KWI=8 --config MWG=128,NWG=128,KWG=16,WPTM=8,WPTN=16,$C,DB=1,KWI=8"
for S in '{"m":4096,"n":4096,"k":4096}' '{"m":4096,"n":768,"k":768}' '{"m":4096,"n":2304,"k":768}' '{"m":4096,"n":3072,"k":768}' '{"m":4096,"n":768,"k":3072}'; do
  $E --shape "$S" $F --baseline >> $OUT/fp32.txt 2>&1
done
grep -E "^\[|clblast|best /|^ok" $OUT/fp32.txt | cut -c1-140
