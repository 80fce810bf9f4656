#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a while each: scripts/fuzz.sh [TIME=10s] [JOBS=1]
#
# JOBS targets run at once, each with JOBS-independent -parallel (GOMAXPROCS / JOBS
# workers, at least one), so the machine's cores stay busy while a target's test
# binary builds or its seed corpus runs. The README's test command runs it with
# 5s and 2 jobs; run it longer (scripts/fuzz.sh 60s) for a deeper search.
#
# Go 1.26's fuzz coordinator can end a clean run with a bare "context deadline exceeded"
# exactly at -fuzztime, with no failing input (go.dev/issue/75804, fixed in Go 1.27). A
# real failure always writes its input ("Failing input written to testdata/fuzz/...");
# a run that fails with the deadline message and writes none is reported as that race
# and not counted.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-10s}
jobs=${2:-1}
procs=$(( $(nproc) / jobs )); [ "$procs" -ge 1 ] || procs=1
logs=$(mktemp -d /tmp/coffer-fuzz.XXXXXX)
trap 'rm -rf "$logs"' EXIT

# one PKG TARGET: fuzzes one target; its output goes to the terminal only on failure.
one() {
  local pkg=$1 target=$2 log="$logs/$(echo "$1-$2" | tr '/.' '__').log"
  echo "fuzz $pkg $target ($fuzztime)"
  if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -parallel "$procs" "$pkg" >"$log" 2>&1; then
    return 0
  fi
  if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
    echo "  ($pkg $target: ended by Go's fuzztime deadline race, go.dev/issue/75804; no failing input)"
    return 0
  fi
  cat "$log"
  return 1
}
export -f one
export fuzztime procs logs

grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r file; do
  pkg=./$(dirname "${file#./}")
  grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed "s|^func |$pkg |"
done | xargs -P "$jobs" -L 1 bash -c 'one "$0" "$1"'
