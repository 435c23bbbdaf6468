#!/usr/bin/env bash
# Strategy benchmark: every search strategy replayed over every recorded space under
# tests/data/spaces (exhaustive runs on real devices), 20 seeds each; prints, per space, the median
# fraction of the exhaustive optimum reached after 5%, 10% and 20% of the space. No device needed.
# Usage: scripts/strategy-bench.sh [build dir] [extra `ocltune simulate` flags, e.g. --seeds 50]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
shift || true
exec "$build/ocltune" simulate --seeds 20 --space "$root"/tests/data/spaces/*.jsonl "$@"
