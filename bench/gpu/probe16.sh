# Sixteenth H200 run: `ocltune --device <H200> --ops all` with the default preset, budget and a fresh
# database, at the end of the third session (new layer_norm and softmax variants, CPU GEMM variant
# absent there): wall time against the 15-minute target, every family in `best`, no failure.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
start=$(date +%s)
timeout 540 .gpu/bin/ocltune --device $OCLTUNE_GPU --ops all --db $OUT/all.db > $OUT/tune-all.txt 2>&1
echo "ocltune --ops all rc=$? $(( $(date +%s) - start ))s"
tail -4 $OUT/tune-all.txt | cut -c1-250
python3 - "$OUT/all.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
print(c.execute("select op, count(*) from best group by op").fetchall())
print(c.execute("select status, count(*) from measurements group by status").fetchall())
PY
