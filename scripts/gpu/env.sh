# shellcheck shell=bash
# Sourced by scripts/gpu/run.sh on the GPU host before any experiment (docs/GPU.md): registers the
# NVIDIA ICD, unpacks the Debian libraries the host lacks (carried in .gpu/*.deb) and exports
# OCLTUNE_GPU, the index of the NVIDIA device (`ocltune devices` lists PoCL first there).
# Needs OCLTUNE (the ocltune binary to ask; default .gpu/bin/ocltune). Globs: run it before any `set -f`.
mkdir -p /etc/OpenCL/vendors
echo /usr/lib/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
# Once per machine: sourcing again (torch-backend.sh does) while a program runs on these libraries
# would rewrite files it has mapped, and it dies of SIGBUS.
for f in .gpu/*.deb; do
  [ -e "$f" ] && [ ! -e "/tmp/gpu/.$(basename "$f").done" ] && dpkg -x "$f" /tmp/gpu && touch "/tmp/gpu/.$(basename "$f").done"
done
export LD_LIBRARY_PATH=/tmp/gpu/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OCLTUNE=${OCLTUNE:-.gpu/bin/ocltune}
if [ -z "${OCLTUNE_GPU:-}" ]; then  # preset OCLTUNE_GPU to pick another device
  OCLTUNE_GPU=$("$OCLTUNE" devices --json | python3 -c 'import json,sys; print(next(d["index"] for d in json.load(sys.stdin) if "NVIDIA" in d["platform"]))')
fi
export OCLTUNE_GPU
echo "NVIDIA device index: $OCLTUNE_GPU"
