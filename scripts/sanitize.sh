#!/usr/bin/env bash
# The ASan + UBSan job: configures build-asan/ (torch and benchmarks off) with
# -fsanitize=address,undefined, builds it, and runs the C++ suites through CTest, the C ABI tests
# (CApi.*) included. Any sanitizer report fails its test: UBSan does not recover, ASan and
# LeakSanitizer end the process with exit status 1.
#
#   scripts/sanitize.sh [all|build|test]
#   scripts/sanitize.sh torch [build|test]
#
# $SANITIZE_TESTS narrows the tests to a ctest -R regex (default: all), e.g.
# SANITIZE_TESTS='^(CApi|Runtime|Database|DbCommand)' for the C ABI, runtime and database suites.
# On a shared machine wrap it in the CPU lock (flock /tmp/ocltune-cpu.lock scripts/sanitize.sh).
# $OCLTUNE_ASAN_BUILD moves the build directory; $JOBS sets the parallelism (default: nproc).
#
# `torch` is the PyTorch backend's job: it configures build-asan-torch/ ($OCLTUNE_ASAN_TORCH_BUILD)
# with the same flags and the backend on, builds libocltune, libocltune_torch.so and the CLI (two
# suites call it), and runs pytest suites of ocltune_torch/tests with the ASan and UBSan runtimes
# preloaded into the uninstrumented Python ($OCLTUNE_TORCH_PYTHON, default .venv/bin/python as in
# ocltune_torch/CMakeLists.txt). $SANITIZE_TORCH_TESTS picks the pytest files or node ids
# (default: the subset below; `all`: every test_*.py). `torch build` and `torch test` do one half.
# Results of the runs so far: docs/SANITIZERS.md.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="${OCLTUNE_ASAN_BUILD:-$src/build-asan}"
jobs="${JOBS:-$(nproc)}"
step="${1:-all}"
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1 -g"

if [ "$step" = torch ]; then
  torch_step="${2:-all}"
  torch_build="${OCLTUNE_ASAN_TORCH_BUILD:-$src/build-asan-torch}"
  python="${OCLTUNE_TORCH_PYTHON:-$src/.venv/bin/python}"
  if [ "$torch_step" = all ] || [ "$torch_step" = build ]; then
    cmake -S "$src" -B "$torch_build" -G Ninja -DCMAKE_BUILD_TYPE= -DOCLTUNE_BUILD_TORCH=ON -DOCLTUNE_BUILD_BENCH=OFF \
      -DOCLTUNE_TORCH_PYTHON="$python" \
      -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined"
    cmake --build "$torch_build" -j"$jobs" --target ocltune_torch ocltune
  fi
  if [ "$torch_step" = all ] || [ "$torch_step" = test ]; then
    # The default subset: the device glue (device, allocator and memory, copies, pinned memory,
    # views and data movement, threads, fork, exit, serialization, random numbers, the CPU
    # fallback) and the op groups: GEMM, elementwise and reductions (test_ops.py's layout, edge
    # and in-place cases), convolution, pooling and normalisation (nn ops), activations, casts,
    # indexing, sorting, scans, RNNs, attention, foreach and fused optimisers, autograd. 4.5 to 6
    # minutes on 2 cores; `all` (every file) about 11.
    tests="${SANITIZE_TORCH_TESTS:-test_device.py test_memory.py test_copy.py test_pinned.py test_threads.py test_fork.py
      test_exit.py test_serialization.py test_random.py test_fallback.py test_data_ops.py test_casts.py
      test_ops.py::test_mm_layouts test_ops.py::test_addmm_and_linear test_ops.py::test_bmm_and_matmul
      test_ops.py::test_gemm_edge_sizes test_ops.py::test_gemm_checks test_ops.py::test_binary_scalars_and_layouts
      test_ops.py::test_in_place test_ops.py::test_unary_in_place_and_checks test_ops.py::test_extrema_edge_cases
      test_ops.py::test_reduce_edge_cases test_activations.py test_nn_ops.py test_index_ops.py test_sort.py
      test_scan.py test_rnn.py test_attention.py test_foreach.py test_fused_optim.py test_autograd.py}"
    if [ "$tests" = all ]; then
      tests="$(cd "$src/ocltune_torch/tests" && echo test_*.py)"
    fi
    # Python and torch are not instrumented, so the ASan runtime must be the first library the
    # process loads (ASan refuses to start otherwise): preloaded, with UBSan's, into pytest and into
    # the child processes that the fork, exit and tune-loop suites start. Leaks are not checked:
    # CPython and torch keep their allocations for the process's life by design.
    asan="$(gcc -print-file-name=libasan.so)"
    ubsan="$(gcc -print-file-name=libubsan.so)"
    # --capture=sys: pytest captures Python's output only, so that a report, written to the
    # process's stderr by the sanitizer runtime, reaches the terminal; with pytest's default fd
    # capture a process that a report ends loses it and pytest exits 1 without a word. (GCC's
    # UBSan runtime ignores log_path when ASan's is loaded too, so the reports cannot go to files.)
    # A child process's report is in its test's captured output: the tests that start children
    # assert on their exit status and print their stderr.
    # use_sigaltstack=0: PoCL's LLVM (libLLVM-15) replaces ASan's alternate signal stack of a thread
    # that compiles kernels with one of its own from malloc (SIGSTKSZ + 64 KiB, 79040 bytes here, as
    # ASan's is smaller); when such a thread ends, ASan munmaps that heap block and dies on its own
    # CHECK ("unable to unmap", sanitizer_posix.cpp:61). test_threads.py's threads hit it on a cold
    # PoCL cache, 3 of 3 times, and 0 of 3 with the option. What is lost: ASan's report of a stack
    # overflow (the process still dies of the SIGSEGV).
    # One pytest process per file (its node ids together), as CTest runs them: a suite's imports may
    # change global state (test_opinfo.py's torch.testing._internal locks torch.backends.cudnn's
    # flags, which test_nn_ops.py sets), and a report ends only its own file's process.
    cd "$src/ocltune_torch/tests"
    declare -A ids=()
    files=""
    for t in $tests; do
      f="${t%%::*}"
      [ -n "${ids[$f]+set}" ] || files="$files $f"
      ids[$f]="${ids[$f]:-} $t"
    done
    status=0
    failed=""
    for f in $files; do
      echo "=== ${ids[$f]}"
      # shellcheck disable=SC2086  # ${ids[$f]} is a list of words
      env LD_PRELOAD="$asan:$ubsan" \
        ASAN_OPTIONS="detect_leaks=0:use_sigaltstack=0:abort_on_error=0:detect_stack_use_after_return=0:${ASAN_OPTIONS:-}" \
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}" \
        PYTHONPATH="$src" OCLTUNE_TORCH_LIBRARY="$torch_build/ocltune_torch/libocltune_torch.so" \
        OCLTUNE_CLI="$torch_build/ocltune" OCLTUNE_TEST_DEVICE="${OCLTUNE_TEST_DEVICE:-0}" \
        "$python" -m pytest -q -p no:cacheprovider --capture=sys ${ids[$f]} || { status=1; failed="$failed $f"; }
    done
    if [ $status -ne 0 ]; then echo "sanitize.sh torch: failed:$failed"; fi
    exit $status
  fi
  exit 0
fi

if [ "$step" = all ] || [ "$step" = build ]; then
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE= -DOCLTUNE_BUILD_TORCH=OFF -DOCLTUNE_BUILD_BENCH=OFF \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined"
  cmake --build "$build" -j"$jobs"
fi

if [ "$step" = all ] || [ "$step" = test ]; then
  # Leaks: the OpenCL driver (PoCL and its LLVM) keeps allocations for the process's life; ours
  # are reported. Not run here: the shell-script tests (format, layering, README, the installed
  # package's consumer build, which links without the sanitizer runtime) and the nightly report
  # tests (they run the benchmarks, which this build leaves out).
  export ASAN_OPTIONS="abort_on_error=0:detect_leaks=1:detect_stack_use_after_return=0:${ASAN_OPTIONS:-}"
  export LSAN_OPTIONS="suppressions=$src/scripts/sanitize.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
  skip='^(readme_quick_start|layering|format_check|Install\.FindPackageConsumer|report_nightly|report_renders_in_chromium)$'
  # LeakSanitizer's own tracer crashes (signal 11 after the test passed) at the exit of a process
  # that ran CLBlast; those tests run with leak detection off, ASan and UBSan still on.
  clblast='Clblast|Baselines'
  status=0
  ctest --test-dir "$build" --output-on-failure -j"$jobs" --timeout 1800 -R "${SANITIZE_TESTS:-.}" --no-tests=ignore \
    -E "$skip|$clblast" || status=1
  ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" ctest --test-dir "$build" --output-on-failure -j"$jobs" \
    --timeout 1800 -R "$clblast" -E "$skip" --no-tests=ignore || status=1
  exit $status
fi
