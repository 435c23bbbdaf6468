#!/usr/bin/env bash
# A device command runs in a copy of the working tree taken when the call starts, so an edit made
# here while a call waits for a machine (minutes, when none is free) reaches it half-done. This pins
# a commit instead: here, `scripts/gpu/snapshot.sh [COMMIT]` (default HEAD) writes its tracked files
# to .gpu/tree.tgz (git archive, about 1.4 MiB; carried with .gpu); on the device,
# `bash scripts/gpu/snapshot.sh --run CMD...` unpacks it into a temporary folder, links .gpu into it
# and runs CMD there ($OUT and the environment unchanged). The binaries in .gpu/ should come from the
# same commit (scripts/gpu/prepare.sh), as the carried scripts and databases do.
#
#   scripts/gpu/snapshot.sh [COMMIT]                 here: .gpu/tree.tgz from COMMIT
#   bash scripts/gpu/snapshot.sh --run CMD [ARGS]    device: CMD in the snapshot (e.g. scripts/gpu/run.sh NAME)
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" = "--run" ]; then
  shift
  [ $# -gt 0 ] || { echo "snapshot: --run needs a command" >&2; exit 2; }
  [ -f .gpu/tree.tgz ] || { echo "snapshot: .gpu/tree.tgz is missing (run scripts/gpu/snapshot.sh here and carry .gpu)" >&2; exit 1; }
  here=$PWD
  tree=$(mktemp -d)
  tar -xzf .gpu/tree.tgz -C "$tree"
  ln -s "$here/.gpu" "$tree/.gpu"
  cd "$tree"
  echo "snapshot: running in $(cat .snapshot-commit 2>/dev/null || echo '?')"
  exec "$@"
fi
commit=$(git rev-parse --verify "${1:-HEAD}^{commit}")
mkdir -p .gpu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git archive --format=tar "$commit" > "$tmp/tree.tar"
echo "$commit" > "$tmp/.snapshot-commit"
tar -rf "$tmp/tree.tar" -C "$tmp" .snapshot-commit
gzip -c "$tmp/tree.tar" > .gpu/tree.tgz
echo "snapshot: .gpu/tree.tgz holds $(git log --oneline -1 "$commit" | cut -c1-72) ($(du -h .gpu/tree.tgz | cut -f1))"
if ! git diff --quiet "$commit" -- . 2>/dev/null; then
  echo "snapshot: note: the working tree differs from $commit; the device runs the snapshot, not the working tree"
fi
