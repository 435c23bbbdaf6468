# Fourth H200 probe: TF32 tensor-core configurations at 4096^3, warp-blocked (WTN) fp32 variants
# of the best configuration so far, and a random fp32 sample, each next to CLBlast.
set -u
. bench/gpu/env.sh
OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout 200 build-gpu/tests/gemm_test --gtest_brief=1 --gtest_filter='GemmTf32*:GemmSpace*:*m65_n63*:*m257*' > $OUT/gemm_test.txt 2>&1
grep -E "FAILED|PASSED|SKIPPED|Failure" $OUT/gemm_test.txt | head -6
E="timeout 170 $OCLTUNE eval --device $OCLTUNE_GPU --op gemm"
M="MMA=1"
$E --shape '{"m":4096,"n":4096,"k":4096,"math":"tf32"}' --baseline --out $OUT/tf32.json \
  --config $M,BM=128,BN=128,BK=16,WM=2,WN=4,DBUF=1 --config $M,BM=128,BN=128,BK=16,WM=2,WN=2,DBUF=1 \
  --config $M,BM=128,BN=128,BK=16,WM=4,WN=2,DBUF=1 --config $M,BM=128,BN=128,BK=32,WM=2,WN=4,DBUF=0 \
  --config $M,BM=128,BN=128,BK=32,WM=2,WN=2,DBUF=0 --config $M,BM=256,BN=128,BK=16,WM=4,WN=2,DBUF=0 \
  --config $M,BM=128,BN=256,BK=16,WM=2,WN=4,DBUF=0 --config $M,BM=128,BN=256,BK=8,WM=2,WN=4,DBUF=1 \
  --config $M,BM=256,BN=128,BK=8,WM=4,WN=2,DBUF=1 --config $M,BM=64,BN=128,BK=16,WM=2,WN=2,DBUF=1 \
  --config $M,BM=128,BN=64,BK=16,WM=2,WN=2,DBUF=1 --config $M,BM=64,BN=64,BK=16,WM=2,WN=2,DBUF=1 \
  --config $M,BM=128,BN=128,BK=8,WM=2,WN=4,DBUF=1 --config $M,BM=64,BN=256,BK=16,WM=1,WN=4,DBUF=1 \
  --sample 30 --seed 3 --restrict MMA=1 > $OUT/tf32.txt 2>&1
grep -E "clblast|best /" $OUT/tf32.txt; grep -A8 fastest $OUT/tf32.txt | cut -c1-120; grep -c "^ok" $OUT/tf32.txt; grep -v "^ok" $OUT/tf32.txt | grep -E "^[a-z_]+ " | cut -c1-40 | sort | uniq -c
C="VWM=4,VWN=4,VWL=4,SA=1,SB=1,DB=1,KWI=8"
$E --shape '{"m":4096,"n":4096,"k":4096}' --baseline --out $OUT/fp32.json \
  --config MWG=256,NWG=128,KWG=16,WPTM=16,WPTN=8,$C,WTN=0 --config MWG=256,NWG=128,KWG=16,WPTM=16,WPTN=8,$C,WTN=4 \
  --config MWG=256,NWG=128,KWG=16,WPTM=16,WPTN=8,$C,WTN=8 --config MWG=256,NWG=128,KWG=16,WPTM=16,WPTN=8,$C,WTN=16 \
  --config MWG=128,NWG=256,KWG=8,WPTM=8,WPTN=16,$C,WTN=4 --config MWG=128,NWG=256,KWG=8,WPTM=8,WPTN=16,$C,WTN=8 \
  --config MWG=128,NWG=128,KWG=16,WPTM=8,WPTN=8,$C,WTN=8 --config MWG=128,NWG=128,KWG=16,WPTM=8,WPTN=8,$C,WTN=4 \
  --config MWG=256,NWG=128,KWG=8,WPTM=16,WPTN=8,$C,WTN=8 --config MWG=128,NWG=128,KWG=16,WPTM=8,WPTN=8,$C,WTN=16 \
  --sample 50 --seed 11 --restrict SA=1,SB=1,VWL=4,DB=1 > $OUT/fp32.txt 2>&1
grep -E "clblast|best /" $OUT/fp32.txt; grep -A8 fastest $OUT/fp32.txt | cut -c1-140; grep -E "^ok" $OUT/fp32.txt | head -10 | cut -c1-140
