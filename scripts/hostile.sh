#!/usr/bin/env bash
# Runs the hostile-input regression suite (internal/hostile) and prints its counts, one
# line per category and one overall: "hostile: <category> tried=N accepted_wrongly=N
# 5xx=N panics=N". scripts/test.sh runs the same tests as part of `go test ./...`.
set -uo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=${GOFLAGS:--buildvcs=false}
log=$(mktemp /tmp/coffer-hostile.XXXXXX)
trap 'rm -f "$log"' EXIT
go test -count=1 -v -timeout 10m ./internal/hostile/ "$@" >"$log" 2>&1
rc=$?
grep -E '^\s+[a-z_]+_test\.go:[0-9]+: ' "$log" | grep -v 'hostile: \|answers by status' | head -100
grep -E '^hostile: ' "$log"
grep -E '^(--- FAIL|ok|FAIL)' "$log"
exit $rc
