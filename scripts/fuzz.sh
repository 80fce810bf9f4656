#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a while each: scripts/fuzz.sh 30s
#
# Go 1.26's fuzz coordinator can end a clean run with a bare "context deadline exceeded"
# exactly at -fuzztime, with no failing input (go.dev/issue/75804, fixed in Go 1.27). A
# real failure always writes its input ("Failing input written to testdata/fuzz/...");
# a run that fails with the deadline message and writes none is reported as that race
# and not counted.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-10s}
log=$(mktemp /tmp/coffer-fuzz.XXXXXX)
trap 'rm -f "$log"' EXIT
grep -rl --include='*_test.go' '^func Fuzz' . | while read -r file; do
  pkg=./$(dirname "${file#./}")
  grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //' | while read -r target; do
    echo "fuzz $pkg $target ($fuzztime)"
    if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" >"$log" 2>&1; then
      continue
    fi
    if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
      echo "  (ended by Go's fuzztime deadline race, go.dev/issue/75804; no failing input)"
      continue
    fi
    cat "$log"
    exit 1
  done
done
