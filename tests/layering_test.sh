#!/usr/bin/env bash
# The floor plan as a test (docs/decisions/0033, 0053): each folder includes only the folders below
# it, each op family only itself and the families it declares, tuner/ and runtime/ never include each
# other, the public headers include nothing internal, and no production source names the test-only
# selftest family.
set -uo pipefail
root="$1"
cd "$root" || exit 1
# folder: the folders its sources may include (besides itself).
allowed=(
  "harness:"
  "core:harness"
  "ops:core harness"
  "db:harness"
  "tuner:ops core db harness"
  "runtime:ops core db harness ocltune"
  "cli:tuner runtime ops core db harness"
  "bench:tuner runtime ops core db harness tests ocltune"
  "include/ocltune:ocltune"
  "ocltune_torch:ocltune"  # the PyTorch backend sees only the public C ABI
)
failures=0
for entry in "${allowed[@]}"; do
  folder=${entry%%:*}
  ok=" ${folder##*/} ${entry#*:} "
  while IFS= read -r line; do
    file=${line%%:*}
    target=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<< "$line")
    # The one exception: harness/embedded_file.h is the header-only format of the files that
    # cmake/Embed.cmake compiles in, which the backend uses for its own kernels (no code, no link).
    [[ "$folder" == ocltune_torch && "$line" == *'#include "harness/embedded_file.h"'* ]] && continue
    if [[ "$ok" != *" $target "* ]]; then
      echo "layering: $file includes $target/ (allowed from $folder/:$ok)"
      failures=$((failures + 1))
    fi
  done < <(grep -rnE '^#include "[a-z_]+/' "$folder" --include='*.h' --include='*.hpp' --include='*.cpp' --include='*.c')
done
# Inside the PyTorch backend: the device glue and the plain kernels never include the op lowering,
# and no two of its modules (a .h with its .cpp) include each other, directly or through others.
if grep -rnE '^#include "ocltune_torch/csrc/ops/' ocltune_torch/csrc/device ocltune_torch/csrc/plain; then
  echo "layering: ocltune_torch/csrc/device/ or plain/ includes the op lowering (csrc/ops/)"
  failures=$((failures + 1))
fi
if ! python3 - ocltune_torch/csrc <<'PY'
import pathlib, re, sys
root = pathlib.Path(sys.argv[1])
edges = {}
for f in root.rglob("*.[ch]*"):
    module = str(f.relative_to(root).with_suffix(""))
    for target in re.findall(r'^#include "ocltune_torch/csrc/([a-z_/]+)\.h"', f.read_text(), re.M):
        if target != module:
            edges.setdefault(module, set()).add(target)
state = {}
def visit(m, path):
    state[m] = "open"
    for t in sorted(edges.get(m, ())):
        if state.get(t) == "open":
            print("layering: include cycle in ocltune_torch/csrc: " + " -> ".join(path + [t]))
            sys.exit(1)
        if t not in state:
            visit(t, path + [t])
    state[m] = "done"
for m in sorted(edges):
    if m not in state:
        visit(m, [m])
PY
then
  failures=$((failures + 1))
fi
# Inside ops/: a family includes its own folder, the shared ops/family.h and ops/problem.h, and only
# the families its CMakeLists.txt DEPENDS on (whose kernels it reuses: conv2d runs GEMM's); the shared
# headers include no family (docs/decisions/0053).
for dir in ops/*/; do
  family=$(basename "$dir")
  deps=$(grep -oE 'DEPENDS[^)]*' "$dir/CMakeLists.txt" | grep -oE 'ocltune_op_[a-z0-9_]+' | sed 's/^ocltune_op_//' | tr '\n' ' ')
  ok=" $family family.h problem.h $deps "
  while IFS= read -r line; do
    target=$(sed -E 's/.*#include "ops\/([a-z0-9_.]+).*/\1/' <<< "$line")
    if [[ "$ok" != *" $target "* ]]; then
      echo "layering: ${line%%:*} includes ops/$target (a family may include:$ok)"
      failures=$((failures + 1))
    fi
  done < <(grep -rnE '^#include "ops/' "$dir" --include='*.h' --include='*.cpp')
done
while IFS= read -r line; do
  echo "layering: ${line%%:*}, a header every family may include, includes a family"
  failures=$((failures + 1))
done < <(grep -nE '^#include "ops/[a-z0-9_]+/' ops/family.h ops/problem.h)
if grep -rln "selftest" harness core ops db tuner runtime cli bench include kernels; then
  echo "layering: production sources above name the test-only selftest family"
  failures=$((failures + 1))
fi
if [ "$failures" -ne 0 ]; then echo "layering: $failures violation(s)"; exit 1; fi
echo "layering: every include follows the floor plan"
