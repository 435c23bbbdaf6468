#!/usr/bin/env bash
# Compiles the NVIDIA-only OpenCL kernels (inline PTX: mma.sync, cvt to TF32 / f16x2 / bf16x2) through
# clang's nvptx64 target on this machine, for the parameter combinations their host code can set, so
# that a syntax or type error shows before a GPU session's device time is spent on it. PoCL cannot
# build these files (PTX), and clang checks the C around the asm, not the PTX itself (ptxas does that
# on the GPU). Needs clang with the NVPTX target (clang-15: Debian 12's clang-14 lacks vload_half for that target); not part of .ci/run.
#
#   scripts/check-nvidia-kernels.sh        exit 0 when every combination compiles, 1 otherwise
set -uo pipefail
cd "$(dirname "$0")/.."
clang=$(command -v clang-15 || command -v clang || true)
[ -n "$clang" ] || { echo "check-nvidia-kernels: clang not found"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# conv2d's tensor-core implicit GEMM (ops/conv2d/conv2d_igemm_mma.cpp): storage type (0 fp32/TF32, 1
# fp16, 2 bf16), direction, the tap-outer gathers (forward and input gradient), the input gradient's
# stride phases, the channels-last operands (KMAJOR) with and without cp.async stages and the weight
# gradient's K split, on three tiles (LDSM and BVEC on the middle one).
cat kernels/storage.cl kernels/activation.cl kernels/conv2d_common.cl kernels/conv2d_igemm_gather.cl kernels/mma_tf32.cl \
  kernels/conv2d_igemm_mma.cl > "$tmp/conv2d_igemm_mma.cl"
fail=0 count=0
for dtype in 0 1 2; do
  for dir in 0 1 2; do
    for tap_phased in "0 0 0" "1 0 0" "0 1 0" "1 1 0" "1 0 1" "1 1 1"; do
      read -r tap phased kmajor <<< "$tap_phased"
      [ "$dir" = 2 ] && [ "$tap" = 1 ] && continue
      [ "$dir" != 1 ] && [ "$phased" = 1 ] && continue
      split=1; [ "$dir" = 2 ] && split=8
      for tile in "64 64 16 2 2 0 0" "128 128 16 2 2 1 1" "32 32 8 1 1 0 0"; do
        read -r bm bn bk wm wn ldsm bvec <<< "$tile"
        [ "$tap" = 1 ] && [ $((32 * wm * wn % bn)) != 0 ] && continue  # the host sets TAP_OUTER only then
        # cp.async stages (16-bit KMAJOR only): B as Bs[n][k], no register double buffer, no BVEC;
        # the swizzled layout on the large tile (three stages of it fit 48 KiB only unpadded)
        staging=("0 1 0 0")
        [ "$kmajor" = 1 ] && [ "$dtype" != 0 ] && staging+=("2 0 1 0" "3 0 1 1")
        for stage in "${staging[@]}"; do
          read -r stages dbuf b_nk swizzle <<< "$stage"
          b_vec=$bvec; [ "$b_nk" = 1 ] && b_vec=0
          count=$((count + 1))
          if ! "$clang" -x cl -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header \
            -Dasm=__asm__ -O2 -S -o "$tmp/out.ptx" -DDTYPE="$dtype" -DMMA_INPUT="$dtype" -DDIR="$dir" \
            -DTAP_OUTER="$tap" -DPHASED="$phased" -DKMAJOR="$kmajor" -DKSPLIT="$split" -DHAS_BIAS=1 -DACT=1 -DBM="$bm" -DBN="$bn" -DBK="$bk" -DWM="$wm" \
            -DWN="$wn" -DDBUF="$dbuf" -DLDSM="$ldsm" -DBVEC="$b_vec" -DSWIZZLE="$swizzle" -DSTAGES="$stages" -DB_NK="$b_nk" \
            "$tmp/conv2d_igemm_mma.cl" 2> "$tmp/err"; then
            fail=1
            echo "conv2d_igemm_mma: DTYPE=$dtype DIR=$dir TAP_OUTER=$tap PHASED=$phased KMAJOR=$kmajor KSPLIT=$split STAGES=$stages tile $tile:"
            head -n 8 "$tmp/err"
          elif ! grep -q "mma.sync.aligned" "$tmp/out.ptx"; then
            fail=1
            echo "conv2d_igemm_mma: DTYPE=$dtype DIR=$dir STAGES=$stages tile $tile: no mma.sync in the PTX"
          elif [ "$stages" != 0 ] && ! grep -q "cp.async.cg.shared.global" "$tmp/out.ptx"; then
            fail=1
            echo "conv2d_igemm_mma: DTYPE=$dtype DIR=$dir STAGES=$stages tile $tile: no cp.async in the PTX"
          fi
        done
      done
    done
  done
done
echo "check-nvidia-kernels: $count combinations of conv2d_igemm_mma.cl, $([ $fail = 0 ] && echo "all compile" || echo "some fail")"

# The GEMM family's tensor-core kernels (files in the order of their plans, ops/gemm/gemm_*.cpp) on
# their default tiles, with and without the epilogue (kernels/gemm_epilogue.cl: bias, activation).
gemm_count=0
gemm_kernel() {  # NAME FILES DEFINES...: compiles the concatenation of FILES with DEFINES
  local name=$1 files=$2; shift 2
  (cd kernels && cat $files) > "$tmp/$name.cl"
  for epilogue in "-DHAS_BIAS=0 -DACT=0" "-DHAS_BIAS=1 -DACT=3" "-DHAS_BIAS=0 -DACT=1"; do
    gemm_count=$((gemm_count + 1))
    # shellcheck disable=SC2086
    if ! "$clang" -x cl -cl-std=CL1.2 -target nvptx64-nvidia-nvcl -Xclang -finclude-default-header -Dasm=__asm__ \
      -O2 -S -o "$tmp/out.ptx" "$@" $epilogue "$tmp/$name.cl" 2> "$tmp/err"; then
      fail=1
      echo "$name $* $epilogue:"
      head -n 8 "$tmp/err"
    fi
  done
}
mma="-DBM=64 -DBN=64 -DBK=16 -DWM=2 -DWN=2 -DSTAGES=0 -DDBUF=1 -DLDSM=0 -DBVEC=0 -DGROUP_M=1 -DSWIZZLE=0 -DFRAG_DBUF=0"
for trans in "0 0" "1 1"; do
  read -r ta tb <<< "$trans"
  gemm_kernel gemm_mma "tile_order.cl mma_tf32.cl activation.cl gemm_epilogue.cl gemm_mma.cl" -DTRANS_A=$ta -DTRANS_B=$tb $mma
  gemm_kernel gemm_wgmma "gemm_layout.cl storage.cl activation.cl gemm_epilogue.cl wgmma.cl gemm_wgmma.cl" \
    -DTRANS_A=$ta -DTRANS_B=$tb -DBM=128 -DBN=128 -DBK=16 -DWGS=1
done
for dtype in 0 1 2; do
  gemm_kernel gemm_mma_packed "storage.cl tile_order.cl activation.cl gemm_epilogue.cl mma_packed.cl packed_pipeline.cl gemm_mma_packed.cl" \
    -DDTYPE=$dtype -DBM=128 -DBN=128 -DBK=16 -DWM=2 -DWN=2 -DSTAGES=3 -DGROUP_M=1
  gemm_kernel gemm_wgmma_packed "storage.cl tile_order.cl activation.cl gemm_epilogue.cl wgmma.cl packed_pipeline.cl gemm_wgmma_packed.cl" \
    -DDTYPE=$dtype -DBM=128 -DBN=128 -DBK=16 -DWGS=1 -DSTAGES=3 -DLAG=0 -DGROUP_M=1
done
echo "check-nvidia-kernels: $gemm_count combinations of the GEMM tensor-core kernels, $([ $fail = 0 ] && echo "all compile" || echo "some fail")"
exit $fail
