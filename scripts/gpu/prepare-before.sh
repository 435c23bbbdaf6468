#!/usr/bin/env bash
# Builds another revision's runtime library into .gpu/lib-before/libocltune.so.0, for two runtimes in
# one device command (docs/GPU.md): the before/after of a runtime change measured on the same machine
# in the same call, since two calls may land on machines whose speeds differ by more than the change.
# The revision is checked out as a temporary git worktree and its ocltune_shared built there (without
# the torch backend, whose C API must be the same in both): about 3 minutes on 2 cores.
#
#   scripts/gpu/prepare-before.sh REV     e.g. HEAD~1; then run the benchmark twice in one call, once
#                                         with LD_LIBRARY_PATH=$PWD/.gpu/lib-before:$LD_LIBRARY_PATH
set -euo pipefail
cd "$(dirname "$0")/../.."
rev=${1:?usage: $0 REV}
git rev-parse --verify --quiet "$rev^{commit}" > /dev/null || { echo "prepare-before: no revision $rev" >&2; exit 2; }
tree=$(mktemp -d)
trap 'git worktree remove --force "$tree" 2> /dev/null; rm -rf "$tree"; git worktree prune' EXIT
git worktree add --detach -f "$tree" "$rev" > /dev/null
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$PWD")} CCACHE_NOHASHDIR=true
cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOCLTUNE_BUILD_TORCH=OFF "${launcher[@]}" > "$tree/cmake.log" ||
  { tail -n 20 "$tree/cmake.log" >&2; exit 1; }
make -C "$tree/build" -j "${JOBS:-2}" ocltune_shared > "$tree/make.log" 2>&1 || { tail -n 20 "$tree/make.log" >&2; exit 1; }
library=$(find "$tree/build/runtime" -name 'libocltune.so.0*' -type f | head -n 1)
mkdir -p .gpu/lib-before
strip -o .gpu/lib-before/libocltune.so.0 "$library"
echo "prepare-before: .gpu/lib-before/libocltune.so.0 is $(git rev-parse --short "$rev")'s runtime"
