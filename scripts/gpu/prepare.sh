#!/usr/bin/env bash
# Prepares .gpu/, the ignored folder carried to the GPU host for scripts/gpu/run.sh (docs/GPU.md):
# builds the programs the named experiments need (build-gpu, Release, benchmarks on), strips them
# into .gpu/bin, and downloads the Debian libraries the host lacks into .gpu/*.deb.
#
#   scripts/gpu/prepare.sh [--dry-run] [EXPERIMENT...]    no EXPERIMENT: the programs of every one
#   scripts/gpu/prepare.sh [--dry-run] --torch            what scripts/gpu/torch-backend.sh needs
#
# --torch also copies the runtime library, the backend's embedded kernels, the system database and
# the OpenCL headers (the host lacks them) into .gpu/, all from one build of this tree, so that the
# extension built there and the library it loads agree (docs/GPU.md).
#
# Environment: BUILD (default build-gpu), JOBS (default 2). The carried tree must stay under 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/../.."

dry=0
torch=0
if [ "${1:-}" = "--dry-run" ] || [ "${1:-}" = "-n" ]; then dry=1; shift; fi
if [ "${1:-}" = "--torch" ]; then torch=1; shift; fi
build=${BUILD:-build-gpu}
jobs=${JOBS:-2}
step() { echo "+ $*"; if [ "$dry" = 0 ]; then "$@"; fi; }

targets=(ocltune)  # env.sh asks it for the device index
if [ "$torch" = 1 ]; then
  targets+=(ocltune_shared ocltune_torch)  # the library, and ocltune_torch for its embedded kernels' source
elif [ $# -eq 0 ]; then
  read -r -a more <<< "$(python3 scripts/gpu/runner.py --binaries)"
  targets+=("${more[@]}")
else
  for exp in "$@"; do
    read -r -a more <<< "$(python3 scripts/gpu/runner.py --binaries "$exp")"
    targets+=("${more[@]}")
  done
fi
read -r -a targets <<< "$(printf '%s\n' "${targets[@]}" | awk 'NF && !seen[$0]++' | tr '\n' ' ')"

# A build tree that exists keeps its settings (BUILD=build reuses the test build, no second build).
[ -f "$build/CMakeCache.txt" ] || step cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DOCLTUNE_BUILD_BENCH=ON
step cmake --build "$build" -j"$jobs" --target "${targets[@]}"
step mkdir -p .gpu/bin
for t in "${targets[@]}"; do
  [ "$t" = ocltune_shared ] || [ "$t" = ocltune_torch ] && continue  # copied below
  # the shallowest match: build-gpu/ocltune, build-gpu/tests/gemm_test, build-gpu/bench/dispatch_bench
  path=$(find "$build" -type f -name "$t" -perm -u+x -printf '%d %p\n' 2>/dev/null | sort -n | head -1 | cut -d' ' -f2- || true)
  if [ -z "$path" ]; then
    [ "$dry" = 1 ] || { echo "prepare: $t not found under $build" >&2; exit 1; }
    path="$build/.../$t"
  fi
  step strip -o ".gpu/bin/$t" "$path"
done
if [ "$torch" = 1 ]; then
  step mkdir -p .gpu/lib .gpu/src .gpu/include
  step strip -o .gpu/lib/libocltune.so.0 "$build/runtime/libocltune.so.0"
  step cp "$build/ocltune_torch/plain_kernel_files.cpp" .gpu/src/plain_kernel_files.cpp
  step cp "$build/share/ocltune/system.db" .gpu/system.db
  step cp -r /usr/include/CL .gpu/include/
  # expecttest (pure Python, for torch's OpInfo tests), which the host's Python lacks
  expecttest=$(.venv/bin/python -c 'import expecttest, os; print(os.path.dirname(expecttest.__file__))')
  step mkdir -p .gpu/py && step cp -r "$expecttest" .gpu/py/
fi
for pkg in libclblast1 libfmt9 libsqlite3-0 libbenchmark1debian; do
  compgen -G ".gpu/${pkg}_*.deb" > /dev/null || step bash -c "cd .gpu && apt-get download $pkg"
done
if [ "$dry" = 0 ]; then
  size=$(du -sm .gpu | cut -f1)
  echo "prepare: .gpu is $size MiB (carry it: run(..., carry=[\".gpu\"]))"
  [ "$size" -lt 60 ] || echo "prepare: warning: over 60 MiB; the carried tree must stay under 64 MiB" >&2
fi
