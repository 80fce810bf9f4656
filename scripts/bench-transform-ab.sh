#!/usr/bin/env bash
# Compares image transformation through two coffer builds, e.g. the in-process libvips
# engine of an older build against the coffer-imager worker: the 5.3 MB 4000x3000
# benchmark JPEG -> w=800 (random offset 0..99 so every request really transforms,
# variant caches off). Per round and binary (alternating A B A B ...): latency of 20
# sequential requests (median), then wrk -t2 -c4 for DURATION (req/s, p50). Also
# prints RSS after the first transform, of the server and of its children.
#   scripts/bench-transform-ab.sh ROUNDS DURATION BINARY_A BINARY_B
# A binary that uses the worker needs coffer-imager next to it (scripts/build.sh DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=$1 dur=$2 bin_a=$3 bin_b=$4
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
work=$(mktemp -d /tmp/coffer-transform-ab.XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
"$bin_a" bench --fixtures-dir "$work/fx" >/dev/null 2>&1
jpeg=$work/fx/bench-image-4000x3000.jpg
rss() { awk '/^VmRSS/{print $2}' "/proc/$1/status"; }
kids_rss() { local s=0 k; for k in $(cat /proc/"$1"/task/*/children); do s=$((s + $(rss "$k"))); done; echo $s; }
cat >"$work/t.lua" <<'LUA'
request = function() return wrk.format("GET", path .. "?w=" .. (800 + math.random(0, 99))) end
LUA
run() { # binary label
  local p; p=$(port); rm -rf "$work/data"
  "$1" serve --listen "127.0.0.1:$p" --data-dir "$work/data" --admin-secret s --log-level warn \
    --variant-cache-size 0 --variants-per-file 0 >"$work/log" 2>&1 &
  pid=$!
  local C=http://127.0.0.1:$p
  for _ in $(seq 300); do curl -sf "$C/healthz" >/dev/null && break; sleep 0.05; done
  curl -sf -H 'x-hasura-admin-secret: s' -d '{"id":"pub","public":true}' "$C/v1/buckets" >/dev/null
  local id; id=$(curl -sf -H 'x-hasura-admin-secret: s' -F bucket-id=pub -F "file[]=@$jpeg" "$C/v1/files" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["processedFiles"][0]["id"])')
  curl -sf -o /dev/null "$C/v1/files/$id?w=799"
  echo "$2 rss-after-first server $(rss $pid) children $(kids_rss $pid)" >>"$work/runs.txt"
  for i in $(seq 20); do curl -sf -o /dev/null -w "$2 latency %{time_total}\n" "$C/v1/files/$id?w=$((700 + i))"; done >>"$work/runs.txt"
  (echo "path = '/v1/files/$id'"; cat "$work/t.lua") >"$work/t2.lua"
  wrk -t2 -c4 -d"$dur" --latency -s "$work/t2.lua" "$C" |
    awk -v l="$2" '/Requests\/sec/{print l, "rps", $2} $1=="50%"{v=$2; n=v+0; if (v ~ /us$/) n/=1000; else if (v ~ /[0-9]s$/) n*=1000; print l, "p50ms", n} /Non-2xx/{print l, "non2xx", $NF}' >>"$work/runs.txt"
  echo "$2 hwm server $(awk '/^VmHWM/{print $2}' /proc/$pid/status)" >>"$work/runs.txt"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
}
for r in $(seq "$rounds"); do run "$bin_a" A; run "$bin_b" B; echo "round $r done" >&2; done
python3 - "$work/runs.txt" "$bin_a" "$bin_b" <<'PY'
import statistics as st, sys
v = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[1] == "rss-after-first":
        v.setdefault((f[0], "server kB"), []).append(float(f[3])); v.setdefault((f[0], "children kB"), []).append(float(f[5]))
    elif f[1] == "hwm":
        v.setdefault((f[0], "server VmHWM kB"), []).append(float(f[3]))
    else:
        v.setdefault((f[0], f[1]), []).append(float(f[2]) * (1000 if f[1] == "latency" else 1))
names = {"A": sys.argv[2], "B": sys.argv[3]}
for k in ["latency", "rps", "p50ms", "non2xx", "server kB", "children kB", "server VmHWM kB"]:
    a, b = v.get(("A", k)), v.get(("B", k))
    if a and b:
        ma, mb = st.median(a), st.median(b)
        print(f"{k:16} A {ma:10.1f}  B {mb:10.1f}  B/A {mb / ma if ma else float('nan'):.2f}   (n={len(a)},{len(b)})")
print("A =", names["A"], " B =", names["B"], " (latency: ms per sequential request; rss after the first transform)")
PY
