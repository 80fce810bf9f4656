#!/usr/bin/env bash
# Compares the CPU coffer's libvips engine spends on a 5 MB 4000x3000 JPEG -> 800 px
# + Gaussian blur sigma 2 (JPEG and WebP out) with libvips' own command-line tool on
# the same work ("vips thumbnail" then "vips gaussblur", VIPS_CONCURRENCY=1; see
# BenchmarkVipsCLI800Blur2 in imaging/vips/bench_test.go). Runs the two benchmarks
# alternately so a noisy, shared machine slows both alike, and prints every run, the
# median cpu-ms/op of each case and the ratios coffer/CLI: raw, and against the CLI
# less its two process start-ups (the "startup" case: the same commands on a 16x16 JPEG).
#   scripts/bench-vips.sh [ROUNDS=5] [OPS_PER_RUN=10]
# Needs libvips-dev and libvips-tools (the vips command).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5} ops=${2:-10}
command -v vips >/dev/null || { echo "bench-vips.sh: the vips command is missing (apt-get install libvips-tools)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/vips.test" ./imaging/vips
for _ in $(seq "$rounds"); do
  for bench in 'Transform800Blur2$' 'VipsCLI800Blur2$'; do
    (cd imaging/vips && "$work/vips.test" -test.run '^$' -test.bench "$bench" -test.benchtime "${ops}x") |
      grep '^Benchmark' | tee -a "$work/runs.txt"
  done
done
awk '
  {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
    for (i = 2; i <= NF; i++) if ($(i) == "cpu-ms/op") v[name, ++n[name]] = $(i-1)
  }
  function median(k,   i, j, t, m, a) {
    m = n[k]
    for (i = 1; i <= m; i++) a[i] = v[k, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    start = median("VipsCLI800Blur2/startup")
    printf "\nmedians over %d runs (cpu-ms/op); CLI start-up (2 processes): %.1f\n", n["VipsCLI800Blur2/startup"], start
    printf "%-6s %10s %10s %12s %10s %14s\n", "out", "coffer", "vips CLI", "CLI-startup", "ratio", "ratio-startup"
    split("jpeg webp", fmts, " ")
    for (f = 1; f <= 2; f++) {
      c = median("Transform800Blur2/" fmts[f]); v2 = median("VipsCLI800Blur2/" fmts[f])
      printf "%-6s %10.1f %10.1f %12.1f %10.2f %14.2f\n", fmts[f], c, v2, v2 - start, c / v2, c / (v2 - start)
    }
  }' "$work/runs.txt"
