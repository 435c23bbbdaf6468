# Seventh H200 run: the target shapes that probe5's 150 s did not reach (conv backward, reduce,
# elementwise, layer_norm, softmax) tuned into probe5's database (carried in .gpu/), then the
# nightly benchmark of every target shape from that database (tuned vs default vs CLBlast / copy).
set -u
. bench/gpu/env.sh
cp .gpu/h200-targets.db $OUT/h200-targets.db
timeout 260 build-gpu/ocltune --device $OCLTUNE_GPU --db $OUT/h200-targets.db --shapes bench/gpu/targets-rest.json \
  --time-budget 240s > $OUT/tune_rest.txt 2>&1
echo "tune rc=$?"; grep -A12 '^op ' $OUT/tune_rest.txt | cut -c1-220; tail -2 $OUT/tune_rest.txt
export OCLTUNE_PYTHON=$(command -v python3)
timeout 240 scripts/nightly.sh --device $OCLTUNE_GPU --bin build-gpu --out $OUT/n --db $OUT/h200-targets.db \
  --shapes bench/gpu/targets.json --tune-budget 0 --repetitions 3 --min-time 0.3 > $OUT/nightly.txt 2>&1
echo "nightly rc=$?"; tail -3 $OUT/nightly.txt
L=$OUT/n/latest
cp $L/bench.json $OUT/bench.json; cp $L/report/index.html $OUT/index.html 2>/dev/null
rm -rf $OUT/n
