# Second H200 probe (after the local-memory alignment fix): GEMM correctness on the NVIDIA driver,
# hand-picked big-tile configurations and a random sample at 4096^3, each next to CLBlast.
set -u
. bench/gpu/env.sh
OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU timeout 150 build-gpu/tests/gemm_test --gtest_brief=1 > $OUT/gemm_test.txt 2>&1
grep -E "FAILED|PASSED|Failure|exception" $OUT/gemm_test.txt | head -8
S='{"m":4096,"n":4096,"k":4096}'
C="VWM=4,VWN=4,VWL=4,SA=1,SB=1"
HAND="--config MWG=128,NWG=128,KWG=8,WPTM=8,WPTN=8,$C,DB=1,KWI=8
 --config MWG=128,NWG=128,KWG=16,WPTM=8,WPTN=8,$C,DB=1,KWI=8
 --config MWG=128,NWG=128,KWG=8,WPTM=8,WPTN=8,$C,DB=0,KWI=8
 --config MWG=128,NWG=128,KWG=16,WPTM=8,WPTN=8,$C,DB=0,KWI=8
 --config MWG=128,NWG=256,KWG=8,WPTM=8,WPTN=16,$C,DB=1,KWI=8
 --config MWG=256,NWG=128,KWG=8,WPTM=16,WPTN=8,$C,DB=1,KWI=8
 --config MWG=64,NWG=128,KWG=16,WPTM=4,WPTN=8,$C,DB=1,KWI=8
 --config MWG=128,NWG=64,KWG=16,WPTM=8,WPTN=4,$C,DB=1,KWI=8
 --config MWG=64,NWG=64,KWG=16,WPTM=4,WPTN=4,$C,DB=1,KWI=8
 --config MWG=128,NWG=128,KWG=32,WPTM=8,WPTN=8,$C,DB=0,KWI=8
 --config MWG=128,NWG=128,KWG=16,WPTM=8,WPTN=8,VWM=4,VWN=4,VWL=4,SA=1,SB=0,DB=1,KWI=8
 --config MWG=128,NWG=128,KWG=16,WPTM=8,WPTN=8,VWM=2,VWN=2,VWL=4,SA=1,SB=1,DB=1,KWI=8
 --config MWG=128,NWG=128,KWG=16,WPTM=8,WPTN=8,VWM=1,VWN=1,VWL=4,SA=1,SB=1,DB=1,KWI=8"
timeout 150 $OCLTUNE eval --device $OCLTUNE_GPU --op gemm --shape "$S" $HAND --baseline --out $OUT/hand4096.json > $OUT/hand4096.txt 2>&1
cat $OUT/hand4096.txt | cut -c1-150
timeout 180 $OCLTUNE eval --device $OCLTUNE_GPU --op gemm --shape "$S" --sample 80 --seed 5 --restrict SA=1,SB=1,VWL=4 --out $OUT/sample4096.json > $OUT/sample4096.txt 2>&1
grep -c "^ok" $OUT/sample4096.txt; grep -v "^ok" $OUT/sample4096.txt | grep -E "^[a-z_]+ " | cut -c1-60 | sort | uniq -c | head; tail -9 $OUT/sample4096.txt
