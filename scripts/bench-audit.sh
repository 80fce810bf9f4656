#!/usr/bin/env bash
# The audit log's cost to serving (site/audit BenchmarkWrite): Write with a working
# disk, with the writer behind, stuck in write(2), and failing every write, run
# alternately (disk stuck failing disk-behind, ROUNDS times) so a shared machine
# slows all alike; prints the medians of ns/op, process CPU per Write (the writer
# goroutine's included), records dropped per Write and allocs/op, and the load average.
#   scripts/bench-audit.sh [ROUNDS=6] [BENCHTIME=1s]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-6} benchtime=${2:-1s}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/audit.test" ./site/audit
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$rounds"); do
  for kind in disk stuck failing disk-behind; do
    (cd site/audit && "$tmp/audit.test" -test.run '^$' -test.bench "^BenchmarkWrite\$/^$kind\$" \
      -test.benchtime "$benchtime" -test.benchmem) | grep '^Benchmark' | tee -a "$tmp/runs.txt"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-34s %10s %12s %11s %10s %5s\n" "median of $rounds runs each" ns/op cpu-ns/op dropped/op allocs/op "x disk"
awk '
  { name = $1; sub(/-[0-9]+$/, "", name); names[name] = 1
    for (i = 3; i < NF; i++) v[name, $(i+1), ++n[name, $(i+1)]] = $(i) }
  function median(k, u,   i, j, t, m, a) {
    m = n[k, u]
    for (i = 1; i <= m; i++) a[i] = v[k, u, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    base = median("BenchmarkWrite/disk", "ns/op")
    for (k in names) printf "%-34s %10.1f %12.1f %11.4f %10d %5.2f\n", k, median(k, "ns/op"), median(k, "cpu-ns/op"),
      median(k, "dropped/op"), median(k, "allocs/op"), median(k, "ns/op") / base
  }' "$tmp/runs.txt" | sort
