#!/usr/bin/env bash
# Cached 100 KB GETs over h2c (HTTP/2 with prior knowledge, as proxies such as Envoy
# send it), nginx against coffer --h2c, side by side on loopback with h2load
# (nghttp2-client, installed from apt if missing). Targets alternate in every round
# (the order reversed in even rounds); prints per run and then medians of req/s, CPU
# µs per request (utime+stime of the server and its children from /proc over the
# run), failed/errored/timed-out requests (a run with any is INVALID), and ratios to
# nginx.
#
#   scripts/compare-h2c.sh [ROUNDS=3] [SECONDS=10] [CLIENTS=100] [STREAMS=10]
#
# nginx: 2 workers, sendfile on, open_file_cache on, `listen ... http2` without TLS.
# coffer: SQLite + disk, --h2c, a public bucket and a private one with an owner rule
# read with one user's JWT (hot-100k's public and jwt targets of compare-nginx.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3} secs=${2:-10} clients=${3:-100} streams=${4:-10}
export GOFLAGS=${GOFLAGS:--buildvcs=false}
command -v h2load >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nghttp2-client >/dev/null; }
[ -x /usr/sbin/nginx ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null; }
. scripts/lib/loopback.sh
bench_workdir compare-h2c
hot_file

np=$(port)
{ nginx_main; echo "  server { listen 127.0.0.1:$np http2; root $work/www; }"; echo "}"; } >"$work/nginx.conf"
/usr/sbin/nginx -c "$work/nginx.conf" -p "$work" &
nginx_pid=$!
pids+=($nginx_pid)

./scripts/build.sh "$work" 2>/dev/null
cp_=$(port) key=compare-h2c-hs256-key-0123456789abcdef
owner_rules "$work/rules.yaml"
(cd "$work" && exec ./coffer serve --listen "127.0.0.1:$cp_" --data-dir "$work/data" --admin-secret s --h2c \
  --jwt-secret "{\"type\":\"HS256\",\"key\":\"$key\"}" --rules "$work/rules.yaml" --log-level warn \
  >"$work/coffer.log" 2>&1) &
coffer_pid=$!
pids+=($coffer_pid)
C=http://127.0.0.1:$cp_ N=http://127.0.0.1:$np
for _ in $(seq 100); do curl -sf "$C/healthz" >/dev/null && curl -sf --http2-prior-knowledge "$N/small.bin" -o /dev/null && break; sleep 0.1; done
token=$(python3 scripts/mint-jwt.py "$key" alice)
A=(-H "x-hasura-admin-secret: s")
curl -sf "${A[@]}" -d '{"id":"pub","public":true}' "$C/v1/buckets" >/dev/null
curl -sf "${A[@]}" -d '{"id":"priv"}' "$C/v1/buckets" >/dev/null
upload() { curl -sf -H "$2" -F "bucket-id=$1" -F "file[]=@$work/www/small.bin" "$C/v1/files" | python3 -c 'import json,sys; print(json.load(sys.stdin)["processedFiles"][0]["id"])'; }
pub=$(upload pub "x-hasura-admin-secret: s")
priv=$(upload priv "Authorization: Bearer $token")
# Same bytes over h2c from every target, and the rule really checked, before measuring.
cmp <(curl -sf --http2-prior-knowledge "$N/small.bin") "$work/www/small.bin"
cmp <(curl -sf --http2-prior-knowledge "$C/v1/files/$pub") "$work/www/small.bin"
cmp <(curl -sf --http2-prior-knowledge -H "Authorization: Bearer $token" "$C/v1/files/$priv") "$work/www/small.bin"
[ "$(curl -s --http2-prior-knowledge -o /dev/null -w '%{http_version} %{http_code}' "$C/v1/files/$priv")" = "2 404" ]

cpu_ticks() { # pid -> utime+stime of it and its children
  local t=0 p
  for p in "$1" $(pgrep -P "$1" || true); do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done
  echo "$t"
}
results=$work/results.txt tick=$(getconf CLK_TCK)
run() { # name pid url [header]
  local c0 c1 hdr=()
  [ $# -lt 4 ] || hdr=(-H "$4")
  c0=$(cpu_ticks "$2")
  h2load -D "$secs" -c "$clients" -m "$streams" -t 2 "${hdr[@]}" "$3" >"$work/h2load.out" 2>&1
  c1=$(cpu_ticks "$2")
  python3 - "$1" "$((c1 - c0))" "$tick" "$(cut -d' ' -f1 /proc/loadavg)" "$work/h2load.out" <<'PY' | tee -a "$results"
import re, sys
name, ticks, tick, load = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
out = open(sys.argv[5]).read()
rps = float(re.search(r"finished in [^,]+, ([\d.]+) req/s", out).group(1))
m = re.search(r"requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout", out)
done, ok, failed, errored, timeout = (int(m.group(i)) for i in (2, 3, 4, 5, 6))
codes = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", out)
s2xx, other = int(codes.group(1)), sum(int(codes.group(i)) for i in (2, 3, 4))
bad = failed + errored + timeout + other + (ok == 0)  # no response at all is no measurement
cpu = ticks / tick * 1e6 / max(s2xx, 1)  # every 2xx answered while the CPU was counted
print(name, f"{rps:.0f}", f"{cpu:.1f}", bad, load)
PY
}
echo "name req/s cpu_us/req bad load"
for r in $(seq "$rounds"); do
  targets=(nginx coffer-public coffer-jwt)
  [ $((r % 2)) = 1 ] || targets=(coffer-jwt coffer-public nginx)
  for tg in "${targets[@]}"; do
    case $tg in
      nginx) run nginx "$nginx_pid" "$N/small.bin" ;;
      coffer-public) run coffer-public "$coffer_pid" "$C/v1/files/$pub" ;;
      coffer-jwt) run coffer-jwt "$coffer_pid" "$C/v1/files/$priv" "Authorization: Bearer $token" ;;
    esac
  done
done
python3 - "$results" "$rounds" "$secs" "$clients" "$streams" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, rps, cpu, bad, load = line.split()
    rows.setdefault(name, []).append((float(rps), float(cpu), int(bad), float(load)))
med = lambda n, i: statistics.median(r[i] for r in rows[n])
print(f"\nh2c, medians of {sys.argv[2]} alternating rounds of {sys.argv[3]} s (h2load -c{sys.argv[4]} -m{sys.argv[5]} -t2):")
print("| target | req/s | CPU µs/req | load (1 min) | req/s vs nginx | CPU/req vs nginx | valid |")
print("|---|---:|---:|---:|---:|---:|---|")
for n in rows:
    bad = sum(r[2] for r in rows[n])
    valid = "valid" if bad == 0 else f"INVALID ({bad} failed/errored/timed out/non-2xx)"
    print(f"| {n} | {med(n,0):,.0f} | {med(n,1):.1f} | {med(n,3):.2f} | {med(n,0)/med('nginx',0):.2f}x | {med(n,1)/med('nginx',1):.2f}x | {valid} |")
PY
