#!/usr/bin/env bash
# Two questions that decide whether program builds should move to worker processes (issue 39's cold
# step, and tuning, where NVIDIA's OpenCL serialises builds within a process: the tuner's 4 build
# threads took 7.6 s of pool time per program on an H100):
#   1. do builds in separate processes run in parallel?  `ocltune eval` of CONFIGS sampled
#      configurations (each its own program, binary cache off) in 1 process, then in PROCESSES at once
#      with other samples: equal walls mean parallel builds, a wall PROCESSES times longer serialised;
#   2. does a binary that another process built load without compiling again?  The same sample with
#      ocltune's binary cache: built (cold), loaded with the driver's cache as the build left it, and
#      loaded with the driver's cache empty (CUDA_CACHE_PATH: NVIDIA's compute cache of PTX compiles).
#
#   scripts/gpu/build-parallelism.sh [PROCESSES] [CONFIGS]   (GPU host: after scripts/gpu/env.sh; here:
#                                                             OCLTUNE_GPU=0 ALGO=1 for PoCL's FMA GEMM)
set -uo pipefail
cd "$(dirname "$0")/../.."
procs=${1:-4}
configs=${2:-6}
bin=${OCLTUNE:-.gpu/bin/ocltune}
device=${OCLTUNE_GPU:?OCLTUNE_GPU must name the device (scripts/gpu/env.sh sets it)}
algo=${ALGO:-8}  # conv2d's tensor-core implicit GEMM: programs of the size the models build
shape='{"dir":"fwd","n":8,"c":64,"h":28,"w":28,"k":64,"r":3,"s":3,"pad_h":1,"pad_w":1,"dtype":"bf16"}'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CUDA_CACHE_PATH=$tmp/nv-cache POCL_CACHE_DIR=$tmp/pocl-cache  # the drivers' own caches, empty
# eval SEED CACHE: the sample of seed SEED, with ocltune's binary cache CACHE (or off)
sample() {
  "$bin" --device "$device" --binary-cache "$2" --seed "$1" --restrict "ALGO=$algo" eval --op conv2d \
    --shape "$shape" --sample "$configs" > "$tmp/eval.$1.$(basename "$2")" 2>&1 || { echo "eval failed:"; tail -n 5 "$tmp/eval.$1.$(basename "$2")"; }
}
seconds() { python3 -c "print(f'{$2 - $1:.1f}')"; }

start=$EPOCHREALTIME
sample 1 off
one=$(seconds "$start" "$EPOCHREALTIME")
echo "1 process, $configs configurations (+ the default): $one s"
start=$EPOCHREALTIME
for p in $(seq 2 $((procs + 1))); do sample "$p" off & done
wait
echo "$procs processes at once, $configs configurations each: $(seconds "$start" "$EPOCHREALTIME") s (parallel: about $one s; serialised: about $(python3 -c "print(f'{$one * $procs:.1f}')") s)"

# A sample no run above built (its programs are in no cache yet).
fresh=$((procs + 2))
start=$EPOCHREALTIME
sample "$fresh" "$tmp/binaries"
echo "binary cache: built $(seconds "$start" "$EPOCHREALTIME") s"
start=$EPOCHREALTIME
sample "$fresh" "$tmp/binaries"
echo "binary cache: loaded in another process, the driver's cache as the build left it $(seconds "$start" "$EPOCHREALTIME") s"
export CUDA_CACHE_PATH=$tmp/nv-cache-empty POCL_CACHE_DIR=$tmp/pocl-cache-empty
start=$EPOCHREALTIME
sample "$fresh" "$tmp/binaries"
echo "binary cache: loaded with the driver's cache empty $(seconds "$start" "$EPOCHREALTIME") s"
grep -h "^ok\|^fail\|rror" "$tmp"/eval.1.off | head -n 3
