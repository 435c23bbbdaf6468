# Sourced at the start of every command on the GPU host (see docs/GPU.md): the NVIDIA ICD, the
# Debian shared libraries the host lacks (carried in .gpu/), and OCLTUNE_GPU = the NVIDIA device index.
mkdir -p /etc/OpenCL/vendors
echo /usr/lib/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
for f in .gpu/*.deb; do dpkg -x "$f" /tmp/gpu; done
export LD_LIBRARY_PATH=/tmp/gpu/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OCLTUNE=${OCLTUNE:-build-gpu/ocltune}
OCLTUNE_GPU=$($OCLTUNE devices --json | python3 -c 'import json,sys; print(next(d["index"] for d in json.load(sys.stdin) if "NVIDIA" in d["platform"]))')
export OCLTUNE_GPU
echo "NVIDIA device index: $OCLTUNE_GPU"
