#!/usr/bin/env bash
# The README's "The tree" table names every top-level folder of the repository, and every folder it
# names exists (its first path component: folders below may be reorganised without this test).
set -euo pipefail
root="$1"
cd "$root"
if ! git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  echo "readme tree: not a git checkout, nothing to compare"; exit 0
fi
# First column of the table's rows: `path/` entries, several per row allowed.
listed=$(awk '/^## The tree/{on=1; next} /^## /{on=0} on && /^\| `/' README.md | cut -d'|' -f2 \
  | grep -o '`[^`]*`' | tr -d '`' | cut -d/ -f1 | sort -u)
tracked=$(git ls-files | grep / | cut -d/ -f1 | sort -u)
failures=0
for folder in $tracked; do
  if ! grep -qxF "$folder" <<< "$listed"; then echo "readme tree: $folder/ is missing from README.md's tree"; failures=$((failures + 1)); fi
done
for folder in $listed; do
  if [ ! -d "$folder" ]; then echo "readme tree: README.md lists $folder/, which does not exist"; failures=$((failures + 1)); fi
done
if [ "$failures" -ne 0 ]; then exit 1; fi
echo "readme tree: the README's tree names every top-level folder"
