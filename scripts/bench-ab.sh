#!/usr/bin/env bash
# Runs two Go benchmarks of one package alternately (A B A B ...), so a noisy, shared
# machine slows both alike, and prints each run, the median ns/op of each and the
# throughput ratio B/A (A's ns/op over B's: above 1 means B is faster).
#   scripts/bench-ab.sh PKG BENCH_A BENCH_B [ROUNDS=6] [BENCHTIME=2s]
# e.g. scripts/bench-ab.sh ./api/hasura 'Get100KBAccess/public$' 'Get100KBAccess/jwt-owner-rule$'
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=$1 a=$2 b=$3 rounds=${4:-6} benchtime=${5:-2s}
bin=$(mktemp -d)/bench.test
trap 'rm -rf "$(dirname "$bin")"' EXIT
go test -c -o "$bin" "$pkg"
dir=$(go list -f '{{.Dir}}' "$pkg")
out=$(dirname "$bin")/runs.txt
for _ in $(seq "$rounds"); do
  for bench in "$a" "$b"; do
    (cd "$dir" && "$bin" -test.run '^$' -test.bench "$bench" -test.benchtime "$benchtime" -test.benchmem) |
      grep '^Benchmark' | sed "s|^|$([ "$bench" = "$a" ] && echo A || echo B) |" | tee -a "$out"
  done
done
awk '
  { for (i = 1; i <= NF; i++) if ($(i) == "ns/op") v[$1, ++n[$1]] = $(i-1) }
  function median(k,   i, j, t, m) {
    m = n[k]
    for (i = 1; i <= m; i++) a[i] = v[k, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    ma = median("A"); mb = median("B")
    printf "median A %.0f ns/op, B %.0f ns/op (%d runs each); throughput B/A = %.2f\n", ma, mb, n["A"], ma / mb
  }' "$out"
