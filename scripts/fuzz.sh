#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a while each: scripts/fuzz.sh 30s
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-10s}
grep -rl --include='*_test.go' '^func Fuzz' . | while read -r file; do
  pkg=./$(dirname "${file#./}")
  grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //' | while read -r target; do
    echo "fuzz $pkg $target ($fuzztime)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" >/tmp/coffer-fuzz.log 2>&1 \
      || { cat /tmp/coffer-fuzz.log; exit 1; }
  done
done
