#!/usr/bin/env bash
# The README's Quick start holds exactly two commands, and .ci/run runs the second one verbatim.
set -euo pipefail
root="$1"
commands=$(awk '/^## Quick start/{on=1; next} /^## /{on=0} on && /^```/{block=!block; next} on && block' "$root/README.md")
count=$(printf '%s\n' "$commands" | grep -c .)
if [ "$count" -ne 2 ]; then
  echo "README Quick start has $count command lines, expected 2:"; printf '%s\n' "$commands"; exit 1
fi
test_command=$(printf '%s\n' "$commands" | sed -n 2p)
if ! grep -qxF "$test_command" "$root/.ci/run"; then
  echo ".ci/run does not run the README test command verbatim:"; echo "  $test_command"; exit 1
fi
run_command=$(printf '%s\n' "$commands" | sed -n 1p)
case "$run_command" in
  *"ocltune --device 0 --ops all"*) ;;
  *) echo "README run command does not run 'ocltune --device 0 --ops all': $run_command"; exit 1 ;;
esac
echo "README Quick start and .ci/run agree"
