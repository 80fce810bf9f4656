#!/usr/bin/env bash
# Does image work starve plain downloads? Measures p99 latency of plain 100 KB
# downloads (wrk, 10 connections) on an idle coffer, then while 10 clients keep
# transforming the 5.3 MB benchmark JPEG (w=800&b=2 with a random width offset per
# request and every variant cache off, so each request really transforms), alternating
# idle and loaded rounds; prints medians and the loaded/idle p99 ratio (target <= 2).
#   scripts/bench-transform-load.sh [ROUNDS=3] [DURATION=10s]
# COFFER_ENV="env GOGC=400" runs the server under extra environment settings.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3} dur=${2:-10s}
export GOFLAGS=${GOFLAGS:--buildvcs=false}
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
work=$(mktemp -d /tmp/coffer-transform-load.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

./scripts/build.sh "$work"
[ -x "$work/coffer-imager" ] || { echo "bench-transform-load.sh: needs libvips-dev for coffer-imager" >&2; exit 1; }
"$work/coffer" bench --fixtures-dir "$work/fx" >/dev/null
jpeg=$(ls -S "$work"/fx/*.jpg | head -n 1)
head -c $((100 * 1024)) /dev/urandom >"$work/small.bin"
p=$(port)
${COFFER_ENV:-} "$work/coffer" serve --listen "127.0.0.1:$p" --data-dir "$work/data" --admin-secret s --log-level warn \
  --variant-cache-size 0 --variants-per-file 0 >"$work/coffer.log" 2>&1 &
pids+=($!)
C=http://127.0.0.1:$p
for _ in $(seq 100); do curl -sf "$C/healthz" >/dev/null && break; sleep 0.1; done
curl -sf -H 'x-hasura-admin-secret: s' -d '{"id":"pub","public":true}' "$C/v1/buckets" >/dev/null
up() { curl -sf -H 'x-hasura-admin-secret: s' -F bucket-id=pub -F "file[]=@$1" "$C/v1/files" | python3 -c 'import json,sys; print(json.load(sys.stdin)["processedFiles"][0]["id"])'; }
small=$(up "$work/small.bin") img=$(up "$jpeg")
echo "image fixture: $(stat -c %s "$jpeg") bytes; $(nproc) cores; image workers: default (one per core)"

cat >"$work/transform.lua" <<LUA
math.randomseed(os.time())
request = function()
  return wrk.format("GET", "/v1/files/$img?w=" .. (700 + math.random(0, 200)) .. "&b=2")
end
LUA
p99() { wrk -t1 -c10 -d"$dur" --latency "$C/v1/files/$small" | awk '$1=="99%"{v=$2; n=v+0; if (v ~ /us$/) n/=1000; else if (v ~ /[0-9]s$/) n*=1000; print n}'; }
results=$work/results.txt
for r in $(seq "$rounds"); do
  echo "idle $(p99)" | tee -a "$results"
  wrk -t2 -c10 -d"$(( ${dur%s} + 4 ))s" -s "$work/transform.lua" "$C" >"$work/transform-$r.txt" &
  tp=$!
  sleep 2
  echo "loaded $(p99)" | tee -a "$results"
  wait $tp
  awk '/Requests\/sec/{print "  transforms/s during the loaded run: " $2} /Non-2xx/{print "  non-2xx transform answers: " $NF}' "$work/transform-$r.txt"
done
python3 - "$results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    k, v = line.split()
    rows.setdefault(k, []).append(float(v))
idle, loaded = statistics.median(rows["idle"]), statistics.median(rows["loaded"])
print(f"plain 100 KB GET p99 (median of {len(rows['idle'])} rounds): idle {idle:.2f} ms, "
      f"under 10 transforming clients {loaded:.2f} ms: ratio {loaded/idle:.2f} (target <= 2)")
PY
