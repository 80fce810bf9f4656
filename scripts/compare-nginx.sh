#!/usr/bin/env bash
# Side-by-side load test of coffer against nginx serving the same files from disk, on
# this machine, loopback only. Installs nginx and wrk from apt if missing.
#
#   scripts/compare-nginx.sh [ROUNDS=3] [DURATION=10s]
#
# Runs, alternating targets within each round (A B C A B C ...) so a noisy machine
# slows all alike, then prints medians and ratios to nginx:
#   100 KB file, 100 connections: nginx, coffer public bucket (anonymous), coffer
#     private bucket with a JWT checked against an owner rule;
#   45 MB file, 50 connections: nginx, coffer public bucket; coffer's peak RSS.
# Also reports coffer's idle RSS right after start (the server alone: its image worker
# starts with the first transformation, which this script does not ask for).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3} dur=${2:-10s}
export GOFLAGS=${GOFLAGS:--buildvcs=false}

need() { command -v "$1" >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null; }; }
need wrk wrk
[ -x /usr/sbin/nginx ] || need nginx nginx-light

work=$(mktemp -d /tmp/coffer-vs-nginx.XXXXXX)
chmod 755 "$work"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# Files: deterministic contents.
mkdir -p "$work/www"
head -c $((100 * 1024)) /dev/urandom >"$work/www/small.bin"
head -c $((45 * 1024 * 1024)) /dev/urandom >"$work/www/large.bin"
chmod 644 "$work/www/"*

# nginx: 2 workers (one per core), sendfile, keep-alive, no access log.
np=$(port)
cat >"$work/nginx.conf" <<NGINX
worker_processes 2;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
daemon off;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on; tcp_nopush on;
  keepalive_requests 1000000;
  client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp;
  uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
  server { listen 127.0.0.1:$np; root $work/www; }
}
NGINX
mkdir -p "$work/tmp"
/usr/sbin/nginx -c "$work/nginx.conf" -p "$work" &
pids+=($!)

# coffer: SQLite + disk, JWT (HS256) and an owner rule on bucket priv.
./scripts/build.sh "$work" # coffer, and coffer-imager next to it when libvips is installed
cp_=$(port)
key=compare-nginx-hs256-key-0123456789abcdef
cat >"$work/rules.yaml" <<'RULES'
rules:
  - role: user
    buckets: [priv]
    upload: {presets: {uploaded_by_user_id: X-Hasura-User-Id}}
    read: {filter: {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}}
RULES
(cd "$work" && exec ./coffer serve --listen "127.0.0.1:$cp_" --data-dir "$work/data" --admin-secret s \
  --jwt-secret "{\"type\":\"HS256\",\"key\":\"$key\"}" --rules "$work/rules.yaml" --log-level warn \
  >"$work/coffer.log" 2>&1) &
cpid=$!
pids+=($cpid)
C=http://127.0.0.1:$cp_ N=http://127.0.0.1:$np
for _ in $(seq 100); do curl -sf "$C/healthz" >/dev/null && curl -sf "$N/small.bin" -o /dev/null && break; sleep 0.1; done
sleep 1
idle_rss=$(awk '/VmRSS/{print $2}' /proc/$cpid/status)

token=$(python3 - "$key" <<'PY'
import base64, hashlib, hmac, json, sys, time
b64 = lambda b: base64.urlsafe_b64encode(b).rstrip(b"=").decode()
head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
body = b64(json.dumps({"sub": "alice", "iat": int(time.time()), "exp": int(time.time()) + 86400,
    "https://hasura.io/jwt/claims": {"x-hasura-default-role": "user", "x-hasura-allowed-roles": ["user"],
    "x-hasura-user-id": "alice"}}).encode())
sig = b64(hmac.new(sys.argv[1].encode(), f"{head}.{body}".encode(), hashlib.sha256).digest())
print(f"{head}.{body}.{sig}")
PY
)
A=(-H "x-hasura-admin-secret: s")
curl -sf "${A[@]}" -d '{"id":"pub","public":true}' "$C/v1/buckets" >/dev/null
curl -sf "${A[@]}" -d '{"id":"priv"}' "$C/v1/buckets" >/dev/null
upload() { # bucket file auth-header -> id
  curl -sf -H "$3" -F "bucket-id=$1" -F "file[]=@$2" "$C/v1/files" | python3 -c 'import json,sys; print(json.load(sys.stdin)["processedFiles"][0]["id"])'
}
pub_small=$(upload pub "$work/www/small.bin" "x-hasura-admin-secret: s")
priv_small=$(upload priv "$work/www/small.bin" "Authorization: Bearer $token")
pub_large=$(upload pub "$work/www/large.bin" "x-hasura-admin-secret: s")
# Every target must serve the same bytes before anything is measured.
for u in "$N/small.bin" "$C/v1/files/$pub_small"; do cmp <(curl -sf "$u") "$work/www/small.bin"; done
cmp <(curl -sf -H "Authorization: Bearer $token" "$C/v1/files/$priv_small") "$work/www/small.bin"
cmp <(curl -sf "$C/v1/files/$pub_large") "$work/www/large.bin"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$C/v1/files/$priv_small")" = 404 ] # the rule is really checked

results=$work/results.txt
run() { # name conns url [header]
  local name=$1 conns=$2 url=$3 out
  if [ $# -ge 4 ]; then out=$(wrk -t2 -c"$conns" -d"$dur" --latency -H "$4" "$url"); else out=$(wrk -t2 -c"$conns" -d"$dur" --latency "$url"); fi
  local rps bps p50 p99 non2xx
  rps=$(awk '/^Requests\/sec/{print $2}' <<<"$out")
  bps=$(awk '/^Transfer\/sec/{v=$2; u=substr(v,length(v)-1); n=v+0; m=(u=="GB")?1024*1024*1024:(u=="MB")?1024*1024:(u=="KB")?1024:1; printf "%.0f", n*m}' <<<"$out")
  p50=$(awk '$1=="50%"{print $2}' <<<"$out")
  p99=$(awk '$1=="99%"{print $2}' <<<"$out")
  non2xx=$(awk '/Non-2xx/{print $NF}' <<<"$out")
  echo "$name $rps $bps $(to_ms "$p50") $(to_ms "$p99") ${non2xx:-0}" | tee -a "$results"
}
to_ms() { awk -v v="$1" 'BEGIN{n=v+0; if (v ~ /us$/) n/=1000; else if (v ~ /ms$/) n=n; else if (v ~ /s$/) n*=1000; printf "%.3f", n}'; }

echo "name req/s bytes/s p50_ms p99_ms non2xx"
for r in $(seq "$rounds"); do
  run nginx-100k 100 "$N/small.bin"
  run coffer-public-100k 100 "$C/v1/files/$pub_small"
  run coffer-jwt-100k 100 "$C/v1/files/$priv_small" "Authorization: Bearer $token"
  run nginx-45m 50 "$N/large.bin"
  run coffer-public-45m 50 "$C/v1/files/$pub_large"
done
peak_rss=$(awk '/VmHWM/{print $2}' /proc/$cpid/status)

python3 - "$results" "$idle_rss" "$peak_rss" "$rounds" "$dur" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, rps, bps, p50, p99, bad = line.split()
    rows.setdefault(name, []).append((float(rps), float(bps), float(p50), float(p99), int(bad)))
med = lambda name, i: statistics.median(r[i] for r in rows[name])
print(f"\nMedians of {sys.argv[4]} alternating rounds of {sys.argv[5]} each (wrk -t2), this machine:")
print("| scenario | req/s | MB/s | p50 ms | p99 ms | vs nginx (req/s) | p99 vs nginx |")
print("|---|---:|---:|---:|---:|---:|---:|")
for size, base in (("100k", "nginx-100k"), ("45m", "nginx-45m")):
    for name in [n for n in rows if n.endswith(size)]:
        print(f"| {name} | {med(name,0):,.0f} | {med(name,1)/1e6:,.1f} | {med(name,2):.2f} | {med(name,3):.2f} | "
              f"{med(name,0)/med(base,0):.2f}x | {med(name,3)/med(base,3):.2f}x |")
bad = sum(r[4] for v in rows.values() for r in v)
print(f"\ncoffer RSS: idle after start {int(sys.argv[2])/1024:.1f} MB; peak over the whole run (VmHWM) {int(sys.argv[3])/1024:.1f} MB")
print(f"non-2xx responses: {bad}")
PY
