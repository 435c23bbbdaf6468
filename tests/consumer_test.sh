#!/usr/bin/env bash
# Installs the build into a fresh prefix, builds tests/consumer against it with find_package(ocltune)
# (no path into the source or build tree), and runs its C and C++ programs on the test device.
set -euo pipefail
build="$1" source="$2" device="${3:-0}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
cmake -S "$source/tests/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log" \
  || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/consumer" > "$work/build.log" || { cat "$work/build.log"; exit 1; }
# The installed library, not the build tree's: nothing else on the loader's path provides it.
# ldd's output is captured first: `ldd | grep -q` under pipefail fails at random when grep exits on its first
# match and ldd dies of SIGPIPE.
libraries=$(ldd "$work/consumer/consumer_c")
grep -q "$work/prefix/.*libocltune.so" <<< "$libraries" \
  || { echo "consumer_c does not load the installed libocltune.so:"; echo "$libraries"; exit 1; }
export OCLTUNE_SYSTEM_DB="$work/prefix/share/ocltune/system.db" OCLTUNE_DB="$work/user.db"
"$work/consumer/consumer_c" "$device"
"$work/consumer/consumer_cpp" "$device"
