#!/usr/bin/env bash
# Installs the Debian 12 packages ocltune builds, tests and runs with (idempotent; quick when done).
set -euo pipefail

packages=(
  build-essential cmake git clang-format  # clang-format: scripts/check-format.sh, a test
  ocl-icd-opencl-dev opencl-headers opencl-clhpp-headers pocl-opencl-icd clinfo
  libclblast-dev libsqlite3-dev sqlite3 libcli11-dev nlohmann-json3-dev
  libbenchmark-dev libgtest-dev libfmt-dev
  python3-matplotlib chromium  # ocltune report: charts; its rendering test
)
# --fuzz: the compiler of the optional libFuzzer build (docs/FUZZING.md). Clang 16, because 14
# cannot capture structured bindings in lambdas, which the sources use.
if [ "${1:-}" = "--fuzz" ]; then
  packages+=(clang-16 libclang-rt-16-dev)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
