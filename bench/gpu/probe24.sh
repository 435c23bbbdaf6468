# Twenty-fourth H200 run: NVIDIA's OpenCL compiler emits ".target sm_90", whose ptxas refuses wgmma
# (probe23). Does a driver option make it target sm_90a? (No: -cl-nv-arch sm_90a is accepted but
# the PTX still says sm_90; the others are refused.) Hence ProgramSource::ptx_target.
set -u
OCLTUNE=.gpu/bin/ocltune . bench/gpu/env.sh
set -f
for opt in "-cl-nv-arch sm_90a" "-cl-nv-arch=sm_90a" "-arch=sm_90a" "-cl-nv-arch compute_90a"; do
  OCLTUNE_BINARY_CACHE=off OCLTUNE_BUILD_OPTIONS="$opt" OCLTUNE_BUILD_LOG=1 timeout 60 .gpu/bin/ocltune --device $OCLTUNE_GPU eval --op gemm \
    --shape '{"m":300,"n":200,"k":100,"math":"tf32"}' --config WGMMA=1,BK=16,BM=128,BN=128,WGS=1 > $OUT/o.txt 2>&1
  echo "== $opt rc=$?"; grep -vE "^ *$|Warning" $OUT/o.txt | head -4 | cut -c1-200
done
