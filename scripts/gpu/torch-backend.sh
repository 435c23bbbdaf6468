#!/usr/bin/env bash
# On the GPU host (docs/GPU.md): builds ocltune_torch against the host's own torch (a torch extension
# must be built against the torch it loads into), then runs its pytest suites on the NVIDIA device
# and the model benchmark against cuda in the same command.
#
# Carried from here in .gpu/: bin/ocltune and lib/libocltune.so.0 (stripped, from build/), include/CL
# (the OpenCL headers the host lacks), src/plain_kernel_files.cpp (the embedded kernels of the build),
# system.db (the shipped rows) and the Debian libraries of scripts/gpu/prepare.sh.
#   scripts/gpu/torch-backend.sh [build|test|bench|overhead|gemm|record|tune|keep|all] [-- arguments]
# bench: ocltune_torch/bench/models.py (e.g. -- --breakdown 15 for the per-op times); overhead:
# ocltune_torch/bench/op_overhead.py, the host cost of one small op on ocl against cuda; gemm:
# ocltune_torch/bench/gemm_bench.py, mm in fp32, TF32, fp16 and bf16 against cuda.
# record: one step of each model and mode at the benchmark's sizes on ocl only, every problem it
# dispatched written to $OUT/model-shapes.json (ocltune_torch.record_shapes; -- models.py arguments,
# e.g. --models resnet50 --batch 64); tune: `ocltune --shapes $OUT/model-shapes.json` into
# $OUT/models.db (-- ocltune arguments, e.g. --ops conv2d,gemm --time-budget 5m).
# keep: $OUT/gpu-keep.tar.gz, what a later call can carry to skip work: the extension built here
# (unpack it in .gpu/: build() reuses it while its sources and the host's torch are the same) and
# ocltune's binary cache (every program this machine compiled; NVIDIA takes seconds per program).
set -euo pipefail
what=${1:-all}
shift || true
[ "${1:-}" = "--" ] && shift
here=$(pwd)
source scripts/gpu/env.sh
export LD_LIBRARY_PATH=$here/.gpu/lib:$LD_LIBRARY_PATH OCLTUNE_SYSTEM_DB=$here/.gpu/system.db
export OCLTUNE_DB=${OCLTUNE_DB:-${OUT:-/tmp}/user.db}  # preset it to run with a tuned database
py=${PYTHON:-python3}
lib=/tmp/ocltune_torch_build/libocltune_torch.so
torch_dir=$($py -c 'import os, torch; print(os.path.dirname(torch.__file__))')
abi=$($py -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')
opencl=$(ldconfig -p | awk '/libOpenCL.so.1 / {print $NF; exit}')

# The binary cache a previous call kept (keep), in place before any program is built.
export OCLTUNE_BINARY_CACHE=${OCLTUNE_BINARY_CACHE:-/tmp/ocltune-binaries}
if [ -f .gpu/keep/binaries.tar.gz ] && [ ! -e "$OCLTUNE_BINARY_CACHE/.carried" ]; then
  mkdir -p "$OCLTUNE_BINARY_CACHE" && tar -xzf .gpu/keep/binaries.tar.gz -C "$OCLTUNE_BINARY_CACHE" && touch "$OCLTUNE_BINARY_CACHE/.carried"
fi

build() {
  mkdir -p /tmp/ocltune_torch_build
  # test_launch_errors.py's LD_PRELOAD shim, next to the library where the test looks for it.
  gcc -shared -fPIC -O2 -I.gpu/include -o /tmp/ocltune_torch_build/libocltune_test_fail_enqueue.so \
    ocltune_torch/tests/support/fail_enqueue.c -ldl
  local sources stamp
  sources="$(grep -o 'csrc/[a-z_/]*\.cpp' ocltune_torch/CMakeLists.txt | sort -u | sed 's|^|ocltune_torch/|') .gpu/src/plain_kernel_files.cpp"
  # The extension depends on its sources, the headers of this tree and the torch it is built for.
  # shellcheck disable=SC2086
  stamp=$( (cat $sources ocltune_torch/csrc/*/*.h include/ocltune/*; $py -c 'import torch; print(torch.__version__)') | sha256sum | cut -c1-16)
  if [ -f .gpu/keep/libocltune_torch.so ] && [ "$(cat .gpu/keep/torch-stamp 2>/dev/null)" = "$stamp" ]; then
    cp .gpu/keep/libocltune_torch.so "$lib"
    echo "reused the carried $lib (stamp $stamp)"
    return
  fi
  # shellcheck disable=SC2086
  printf '%s\n' $sources | xargs -P "$(nproc)" -I{} sh -c 'g++ -D_GLIBCXX_USE_CXX11_ABI='"$abi"' -I. -Iinclude -I.gpu/include \
      -isystem '"$torch_dir"'/include -isystem '"$torch_dir"'/include/torch/csrc/api/include -isystem '"$torch_dir"'/include/kineto -O2 -fPIC -std=c++20 \
      -c {} -o /tmp/ocltune_torch_build/$(basename {}).o'
  g++ -shared -o "$lib" /tmp/ocltune_torch_build/*.o -Wl,-rpath,"$torch_dir/lib" "$torch_dir/lib/libtorch_cpu.so" \
    "$torch_dir/lib/libc10.so" .gpu/lib/libocltune.so.0 "$opencl"
  echo "$stamp" > /tmp/ocltune_torch_build/torch-stamp
  echo "built $lib against torch $($py -c 'import torch; print(torch.__version__)')"
}

keep() {
  mkdir -p /tmp/keep
  strip -o /tmp/keep/libocltune_torch.so "$lib"
  cp /tmp/ocltune_torch_build/torch-stamp /tmp/keep/ 2>/dev/null || cp .gpu/keep/torch-stamp /tmp/keep/
  tar -czf /tmp/keep/binaries.tar.gz -C "$OCLTUNE_BINARY_CACHE" --exclude=.carried .
  tar -czf "${OUT:-/tmp}/gpu-keep.tar.gz" -C /tmp/keep libocltune_torch.so torch-stamp binaries.tar.gz
  ls -la /tmp/keep "${OUT:-/tmp}/gpu-keep.tar.gz"
}

tests() {
  # Eight files at once: NVIDIA's compiler makes each file compile-bound (one after another, the
  # suite did not finish in 420 s; eight at once it takes about 300). A log per file in $OUT.
  # The OpInfo suite needs torch's testing internals, which import expecttest: the GPU host's Python
  # may lack it (it cannot reach PyPI), and one failed collection would stop a whole pytest run.
  local logs=${OUT:-/tmp} files
  # The files that build the most programs first (each ran past 270 s among eight at once), so
  # that the rest fill the slots after them.
  files=$(ls ocltune_torch/tests/test_{opinfo,models,math,index_ops,data_ops,casts,fused_optim}.py; ls ocltune_torch/tests/test_*.py)
  files=$(echo "$files" | awk '!seen[$0]++')
  # TEST_FILES="models nn_ops" runs those files only (e.g. again, after a fix).
  [ -n "${TEST_FILES:-}" ] && files=$(for f in $TEST_FILES; do echo "ocltune_torch/tests/test_$f.py"; done)
  # prepare.sh --torch carries expecttest (pure Python) in .gpu/py for that.
  export PYTHONPATH=$here${PYTHONPATH:+:$PYTHONPATH}
  [ -d .gpu/py ] && PYTHONPATH=$PYTHONPATH:$here/.gpu/py
  $py -c 'import expecttest' 2>/dev/null || { files=$(echo "$files" | grep -v test_opinfo); echo "no expecttest: test_opinfo.py not run"; }
  export OCLTUNE_TORCH_LIBRARY=$lib OCLTUNE_TEST_DEVICE=$OCLTUNE_GPU OCLTUNE_CLI=$here/.gpu/bin/ocltune
  # SIGINT at the time limit: pytest then stops like Ctrl-C and still prints its summary, so the
  # failures of a file that ran out of time are named (rc 2 or 124 with "Interrupted").
  echo "$files" | xargs -P 8 -I{} sh -c 'n=$(basename {} .py); timeout -s INT -k 30 '"${TEST_TIMEOUT:-400}"' '"$py"' \
      -m pytest -q -rfE -p no:cacheprovider {} > '"$logs"'/$n.log 2>&1; echo "$n rc=$? $(tail -1 '"$logs"'/$n.log)"'
  grep -h "^FAILED\|^ERROR" "$logs"/test_*.log || true
  # The device tool brings back 8 files: every log in one archive.
  tar -czf "$logs/pytest-logs.tar.gz" -C "$logs" $(cd "$logs" && ls test_*.log) && rm -f "$logs"/test_*.log
}

bench() {
  OCLTUNE_TORCH_LIBRARY=$lib PYTHONPATH=$here $py ocltune_torch/bench/models.py --baseline cuda --ocl "ocl:$OCLTUNE_GPU" "$@"
}

gemm() {
  OCLTUNE_TORCH_LIBRARY=$lib OCLTUNE_TORCH_STRICT=1 PYTHONPATH=$here $py ocltune_torch/bench/gemm_bench.py --baseline cuda \
    --ocl "ocl:$OCLTUNE_GPU" "$@"
}

overhead() {
  OCLTUNE_TORCH_LIBRARY=$lib OCLTUNE_TORCH_STRICT=1 PYTHONPATH=$here $py ocltune_torch/bench/op_overhead.py --baseline cuda \
    --ocl "ocl:$OCLTUNE_GPU" "$@"
}

record() {
  # One process per call (the file is written when the process exits); repeated calls add to the file.
  local shapes=${OUT:-/tmp}/model-shapes.json part=${OUT:-/tmp}/model-shapes.part.json
  rm -f "$part"
  OCLTUNE_TORCH_RECORD_SHAPES=$part OCLTUNE_TORCH_LIBRARY=$lib PYTHONPATH=$here $py ocltune_torch/bench/models.py \
    --baseline none --ocl "ocl:$OCLTUNE_GPU" --reps 1 --warmup 0 "$@"
  $py - "$part" "$shapes" <<'PY'
import json, os, sys
part, merged = sys.argv[1], sys.argv[2]
old = json.load(open(merged)) if os.path.exists(merged) else []
key = lambda p: json.dumps({k: v for k, v in p.items() if k != "recorded"}, sort_keys=True)
seen = {key(p) for p in old}
new = [p for p in json.load(open(part)) if key(p) not in seen]
json.dump(old + new, open(merged, "w"), indent=1)
print(f"{merged}: {len(old) + len(new)} problems ({len(new)} new)")
PY
}

tune() {
  "$here/.gpu/bin/ocltune" --device "$OCLTUNE_GPU" --shapes "${OUT:-/tmp}/model-shapes.json" --db "${OUT:-/tmp}/models.db" "$@"
}

case $what in
  build) build ;;
  test) tests ;;
  bench) bench "$@" ;;
  overhead) overhead "$@" ;;
  gemm) gemm "$@" ;;
  record) record "$@" ;;
  tune) tune "$@" ;;
  keep) keep ;;
  all) build && tests && bench "$@" ;;
  *) echo "usage: $0 [build|test|bench|overhead|gemm|record|tune|keep|all] [-- arguments]" >&2; exit 2 ;;
esac
