#!/usr/bin/env bash
# Compares the CPU coffer's libvips engine spends on a 5 MB 4000x3000 JPEG -> 800 px
# + Gaussian blur sigma 2 (JPEG and WebP out) with libvips' own command-line tool on
# the same work ("vips thumbnail" then "vips gaussblur", VIPS_CONCURRENCY=1; see
# BenchmarkVipsCLI800Blur2 in imaging/vips/bench_test.go). Runs the two benchmarks
# alternately so a noisy, shared machine slows both alike, and prints every run, the
# median CPU per image of each and the ratios coffer/CLI: raw, and against the CLI's
# net work (less its two process start-ups, measured by running the same commands on
# a 16x16 JPEG, kept at 16 px, right after each iteration).
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
    for (i = 2; i <= NF; i++) if ($(i) ~ /-ms\/op$/) { m = name " " $(i); v[m, ++n[m]] = $(i-1) }
  }
  function median(k, count,   i, j, t, a) {
    for (i = 1; i <= count; i++) a[i] = k[i]
    for (i = 1; i <= count; i++) for (j = i + 1; j <= count; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return count % 2 ? a[(count + 1) / 2] : (a[count / 2] + a[count / 2 + 1]) / 2
  }
  function med(m,   i, a) { for (i = 1; i <= n[m]; i++) a[i] = v[m, i]; return median(a, n[m]) }
  END {
    printf "\nmedians over %d rounds (ms of CPU per image); ratios are medians of the per-round ratios\n", n["Transform800Blur2/jpeg cpu-ms/op"]
    printf "%-5s %8s %10s %12s %10s %11s %15s\n", "out", "coffer", "vips CLI", "CLI start-up", "CLI net", "coffer/CLI", "coffer/CLI net"
    split("jpeg webp", fmts, " ")
    for (f = 1; f <= 2; f++) {
      c = "Transform800Blur2/" fmts[f] " cpu-ms/op"; k = "VipsCLI800Blur2/" fmts[f]
      for (r = 1; r <= n[c]; r++) { raw[r] = v[c, r] / v[k " cpu-ms/op", r]; net[r] = v[c, r] / v[k " net-cpu-ms/op", r] }
      printf "%-5s %8.1f %10.1f %12.1f %10.1f %11.2f %15.2f\n", fmts[f], med(c), med(k " cpu-ms/op"), med(k " startup-ms/op"),
        med(k " net-cpu-ms/op"), median(raw, n[c]), median(net, n[c])
    }
  }' "$work/runs.txt"
