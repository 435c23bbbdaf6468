#!/usr/bin/env bash
# Installs the Debian 12 packages ocltune builds, tests and runs with (idempotent; quick when done).
set -euo pipefail

packages=(
  build-essential cmake git clang-format  # clang-format: scripts/check-format.sh, a test
  ocl-icd-opencl-dev opencl-headers opencl-clhpp-headers pocl-opencl-icd clinfo
  libclblast-dev libsqlite3-dev sqlite3 libcli11-dev nlohmann-json3-dev
  libbenchmark-dev libgtest-dev libfmt-dev
  python3-matplotlib chromium  # ocltune report: charts; its rendering test
  python3-venv  # ocltune_torch: the virtual environment below
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
if [ ${#missing[@]} -ne 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ---- ocltune_torch: the Python virtual environment .venv/ (PyTorch backend, its pytest suites) ----
# OCLTUNE_TORCH_VENV=0 skips it. A stamp holds the hash of the requirements and the interpreter, so a
# second run with nothing changed does not start pip at all.
if [ "${OCLTUNE_TORCH_VENV:-1}" != 0 ]; then
  root="$(cd "$(dirname "$0")/.." && pwd)"
  requirements="$root/ocltune_torch/requirements.txt"
  venv="$root/.venv"
  if [ ! -x "$venv/bin/python" ]; then
    echo "install-deps: creating $venv"
    /usr/bin/python3 -m venv "$venv"
  fi
  stamp="$venv/.ocltune-requirements.sha256"
  want="$( (cat "$requirements"; "$venv/bin/python" --version) | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "install-deps: pip install -r ocltune_torch/requirements.txt into .venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
    echo "$want" > "$stamp"
  fi
fi
# ---- end ocltune_torch ----
