#!/usr/bin/env bash
# The production ocltune binary carries no test-only op family: `--ops selftest` is a usage error
# naming the unknown op there (test support registers it only in ocltune_test_cli).
set -uo pipefail
out=$("$1" --ops selftest --max-evals 1 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 2 ] || { echo "expected exit 2, got $rc"; exit 1; }
grep -q "unknown op 'selftest'" <<< "$out" || { echo "expected an unknown-op message"; exit 1; }
