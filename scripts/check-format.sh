#!/usr/bin/env bash
# Checks that every C and C++ source of the repository is formatted by .clang-format (exit 1 and
# the offending files otherwise); --fix formats them in place. OpenCL C under kernels/ is left
# alone: its text is hashed into database keys, so a reformat would invalidate tuned rows.
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
if [ "${1:-}" = "--fix" ]; then fix=1; fi
clang_format=$(command -v clang-format || command -v clang-format-14 || true)
if [ -z "$clang_format" ]; then
  echo "check-format: clang-format not found (scripts/install-deps.sh installs it)"; exit 1
fi
# Tracked and new (not ignored) files alike, so a file not yet added is checked too.
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*.c' '*.h' '*.cpp' '*.hpp' \
  | grep -v '^tests/fuzz/corpus/' | while read -r f; do [ -f "$f" ] && echo "$f"; done)
if [ "$fix" = 1 ]; then
  "$clang_format" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  if ! "$clang_format" --dry-run -Werror "$f" > /dev/null 2>&1; then bad+=("$f"); fi
done
if [ ${#bad[@]} -ne 0 ]; then
  echo "check-format: ${#bad[@]} of ${#files[@]} files are not formatted (run scripts/check-format.sh --fix):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "check-format: all ${#files[@]} files formatted"
