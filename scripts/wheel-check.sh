#!/usr/bin/env bash
# Builds the ocltune wheel (pyproject.toml) against this checkout's torch, installs it into a fresh
# virtual environment apart from the checkout, and checks it from another directory, with no
# PYTHONPATH, no OCLTUNE_* paths and no build tree in sight (issue 40; docs/WHEEL.md):
#   - `import torch` alone loads the backend (the torch.backends entry point): a product on
#     torch.zeros(..., device="ocl") equals the CPU's; torch.accelerator answers for ocl;
#   - the runtime opens the wheel's own shipped databases (share/ocltune/system.db in the package);
#   - the `ocltune` console script runs the packaged CLI;
#   - built for another torch, the package refuses with both versions named, and `import torch`
#     still works (a warning);
#   - with no OpenCL driver, the package imports and says there is no device.
# CTest runs it as torch.wheel (the whole build: about 1 minute with a warm ccache, several without).
#   scripts/wheel-check.sh [--keep DIR]     (PYTHON=...: the build environment, default .venv/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
source=$(pwd)
py=${PYTHON:-$source/.venv/bin/python}
keep=
[ "${1:-}" = "--keep" ] && keep=${2:?--keep DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "wheel-check: $*" >&2; exit 1; }

# The build: the environment's own torch (no isolation), the wheel's own build tree build-wheel/.
# OCLTUNE_WHEEL_CONFIG adds --config-settings (e.g. cmake.define.OCLTUNE_WERROR=ON).
# CMake's default generator and compilers, as the project's own builds use them (scikit-build-core
# would take Ninja and Python's CXX): the same command lines, so that ccache, where it is the
# launcher (CMAKE_CXX_COMPILER_LAUNCHER=ccache), serves the wheel from the project build's objects.
export CMAKE_GENERATOR=${CMAKE_GENERATOR:-Unix Makefiles} CC=${CC:-cc} CXX=${CXX:-c++}
config=()
for setting in ${OCLTUNE_WHEEL_CONFIG:-}; do config+=("--config-settings=$setting"); done
"$py" -m pip wheel "$source" --no-build-isolation --no-deps -q -w "$work/dist" "${config[@]}" > "$work/build.log" 2>&1 \
  || { tail -40 "$work/build.log"; fail "pip wheel failed"; }
wheel=$(ls "$work"/dist/ocltune-*.whl)
echo "built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"
[ -n "$keep" ] && mkdir -p "$keep" && cp "$wheel" "$keep/"

# A fresh environment. torch comes from the build environment through a .pth file (a test cannot
# download torch); nothing of ocltune does: the build environment has no ocltune package.
"$py" -m venv "$work/venv"
venv_py=$work/venv/bin/python
site=$("$venv_py" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
"$py" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))' > "$site/torch-of-the-build-environment.pth"
"$venv_py" -m pip install -q --no-deps --no-index "$wheel" > "$work/install.log" 2>&1 || { cat "$work/install.log"; fail "pip install failed"; }

# Elsewhere, with nothing of the checkout in the environment.
mkdir -p "$work/elsewhere" "$work/no-drivers"
cd "$work/elsewhere"
clean=(env -u PYTHONPATH -u OCLTUNE_TORCH_LIBRARY -u OCLTUNE_SYSTEM_DB -u OCLTUNE_CLI -u OCLTUNE_REPORTS_DIR
       OCLTUNE_DB="$work/user.db" OCLTUNE_BINARY_CACHE="$work/binaries")

"${clean[@]}" "$venv_py" - "$site" "${OCLTUNE_TEST_DEVICE:-0}" <<'PY'
import json, os, sys
site, device = sys.argv[1], int(sys.argv[2])
import torch  # no import of ocltune_torch: the entry point loads it

import ocltune_torch
assert ocltune_torch.__file__.startswith(site), ocltune_torch.__file__
assert str(ocltune_torch.library_path()).startswith(site), ocltune_torch.library_path()
assert torch.accelerator.current_accelerator().type == "ocl", torch.accelerator.current_accelerator()
assert torch.accelerator.device_count() >= 1
dev = torch.device("ocl", device)
a, b = torch.randn(33, 17), torch.randn(17, 9)
got = (a.to(dev) @ b.to(dev)).relu().sum(0)
torch.accelerator.synchronize(device)
torch.testing.assert_close(got.cpu(), (a @ b).relu().sum(0), rtol=1e-4, atol=1e-4)
assert torch.accelerator.memory_allocated(device) > 0
assert "allocated_bytes.all.current" in torch.accelerator.memory_stats(device)
databases = json.loads(torch.ops.ocltune.dispatch_stats_json(device))["databases"]
system = os.path.join(site, "ocltune_torch", "share", "ocltune", "system.db")
assert databases[:1] == [system], f"the runtime opened {databases}, not the wheel's {system}"
print(f"import torch: ocl:{device} computes; torch.accelerator answers; system database {system}")
PY

version=$(sed -n 's/^project(ocltune VERSION \([0-9.]*\).*/\1/p' "$source/CMakeLists.txt")
[ "$("${clean[@]}" "$work/venv/bin/ocltune" --version)" = "$version" ] || fail "the ocltune console script does not run the CLI"
"${clean[@]}" "$work/venv/bin/ocltune" devices > "$work/devices.txt" || fail "ocltune devices failed"
echo "ocltune console script: $(head -1 "$work/devices.txt")"

# Built for another torch: refused by name; torch itself still imports.
info=$site/ocltune_torch/_build_info.py
cp "$info" "$work/build_info.py"
echo 'TORCH_VERSION = "1.0.0"' > "$info"
if "${clean[@]}" "$venv_py" -c 'import ocltune_torch' > "$work/mismatch.txt" 2>&1; then fail "a wheel for torch 1.0.0 loaded"; fi
torch_version=$("$py" -c 'import torch; print(torch.__version__)')
grep -q "built against torch 1.0.0, but this Python runs torch $torch_version" "$work/mismatch.txt" \
  || { cat "$work/mismatch.txt"; fail "the refusal does not name both versions"; }
"${clean[@]}" "$venv_py" -c 'import torch; print(torch.ones(1) + 1)' > "$work/torch-alone.txt" 2>&1 \
  || { cat "$work/torch-alone.txt"; fail "import torch failed beside a mismatched wheel"; }
grep -q "the ocl device is not available: ocltune_torch: this ocltune wheel was built against torch 1.0.0" "$work/torch-alone.txt" \
  || { cat "$work/torch-alone.txt"; fail "import torch did not warn about the mismatched wheel"; }
cp "$work/build_info.py" "$info"
echo "another torch: refused, naming 1.0.0 and $torch_version; import torch warns and works"

# No OpenCL driver (an ICD loader with no vendor registered): imports, no device, a clear error.
"${clean[@]}" OCL_ICD_VENDORS="$work/no-drivers" "$venv_py" - <<'PY'
import torch
assert torch.ocl.device_count() == 0, torch.ocl.device_count()
assert not torch.ocl.is_available()
try:
    torch.zeros(1, device="ocl")
except RuntimeError as e:
    assert "0 ocl device(s) available" in str(e), e
else:
    raise AssertionError("a tensor on ocl with no OpenCL device")
print("no OpenCL driver: imports, 0 devices, torch.zeros(device='ocl') says so")
PY
echo "wheel-check: passed"
