#!/usr/bin/env bash
# Measures the load generator's own ceiling: coffer bench and wrk alternately (A B A B
# ...) against a trivial 6-byte server on 127.0.0.1, 100 connections each, and prints
# each run, the medians and the ratio coffer/wrk. Needs wrk (apt-get install wrk).
#   bench/overhead.sh [ROUNDS=4] [SECONDS=10]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-4} secs=${2:-10} port=18181
tmp=$(mktemp -d)
trap 'kill "$srv" 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/coffer" ./cmd/coffer
"$tmp/coffer" bench hello-server --listen 127.0.0.1:$port >"$tmp/hello.log" 2>&1 &
srv=$!
sleep 0.5
url=http://127.0.0.1:$port/
for i in $(seq "$rounds"); do
  w=$(wrk -t2 -c100 -d"${secs}s" "$url" | awk '/Requests\/sec/ {print $2}')
  "$tmp/coffer" bench --url "$url" --scenario download_small_file --workers 100 --ramp 0 \
    --hold "${secs}s" --json "$tmp/b.json" >/dev/null
  b=$(sed -n 's/^ *"rps": \([0-9.]*\),*$/\1/p' "$tmp/b.json" | head -1)
  printf 'round %d: wrk %.0f req/s, coffer bench %.0f req/s\n' "$i" "$w" "$b"
  echo "$w $b" >>"$tmp/runs"
done
awk '
  function median(a, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  { w[NR] = $1; b[NR] = $2 }
  END { mw = median(w, NR); mb = median(b, NR)
        printf "median wrk %.0f req/s, coffer bench %.0f req/s; coffer/wrk = %.2f\n", mw, mb, mb / mw }' "$tmp/runs"
