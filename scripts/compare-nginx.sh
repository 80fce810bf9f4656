#!/usr/bin/env bash
# Side-by-side load test of coffer against nginx serving the same files from disk, on
# this machine, loopback only. Installs nginx and wrk from apt if missing.
#
#   scripts/compare-nginx.sh [--base REV] [--no-large] [ROUNDS=3] [DURATION=10s]
#
# --base REV also builds coffer at git revision REV and runs it beside this checkout's,
# alternating the two builds in every round, and prints head/base ratios (the check that
# a refactor kept the hot path's speed). --no-large skips the 45 MB scenarios.
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
base_rev= skip_large=0
while [ $# -gt 0 ]; do
  case $1 in
    --base) base_rev=$2; shift 2 ;;
    --no-large) skip_large=1; shift ;;
    *) break ;;
  esac
done
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

# coffer: SQLite + disk, JWT (HS256) and an owner rule on bucket priv. With --base REV a
# second coffer built from git revision REV runs beside it, set up the same way, and every
# coffer scenario runs on both in alternating order (base first in odd rounds, head first
# in even ones): the refactor check "before and after, alternating builds in one run".
./scripts/build.sh "$work" # coffer, and coffer-imager next to it when libvips is installed
builds=(head)
if [ -n "$base_rev" ]; then
  git worktree add -q --detach "$work/base-src" "$base_rev"
  (cd "$work/base-src" && CGO_ENABLED=0 go build -o "$work/base/coffer" ./cmd/coffer)
  git worktree remove --force "$work/base-src"
  builds=(base head)
fi
key=compare-nginx-hs256-key-0123456789abcdef
cat >"$work/rules.yaml" <<'RULES'
rules:
  - role: user
    buckets: [priv]
    upload: {presets: {uploaded_by_user_id: X-Hasura-User-Id}}
    read: {filter: {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}}
RULES
declare -A url pid pub_small priv_small pub_large
start_coffer() { # build-name dir-with-coffer
  local p; p=$(port)
  (cd "$2" && exec ./coffer serve --listen "127.0.0.1:$p" --data-dir "$work/data-$1" --admin-secret s \
    --jwt-secret "{\"type\":\"HS256\",\"key\":\"$key\"}" --rules "$work/rules.yaml" --log-level warn \
    >"$work/coffer-$1.log" 2>&1) &
  pid[$1]=$!
  pids+=($!)
  url[$1]=http://127.0.0.1:$p
}
start_coffer head "$work"
[ -z "$base_rev" ] || start_coffer base "$work/base"
N=http://127.0.0.1:$np
for b in "${builds[@]}"; do
  for _ in $(seq 100); do curl -sf "${url[$b]}/healthz" >/dev/null && curl -sf "$N/small.bin" -o /dev/null && break; sleep 0.1; done
done
sleep 1
idle_rss=$(awk '/VmRSS/{print $2}' "/proc/${pid[head]}/status")

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
upload() { # base-url bucket file auth-header -> id
  curl -sf -H "$4" -F "bucket-id=$2" -F "file[]=@$3" "$1/v1/files" | python3 -c 'import json,sys; print(json.load(sys.stdin)["processedFiles"][0]["id"])'
}
cmp <(curl -sf "$N/small.bin") "$work/www/small.bin"
for b in "${builds[@]}"; do
  C=${url[$b]}
  curl -sf "${A[@]}" -d '{"id":"pub","public":true}' "$C/v1/buckets" >/dev/null
  curl -sf "${A[@]}" -d '{"id":"priv"}' "$C/v1/buckets" >/dev/null
  pub_small[$b]=$(upload "$C" pub "$work/www/small.bin" "x-hasura-admin-secret: s")
  priv_small[$b]=$(upload "$C" priv "$work/www/small.bin" "Authorization: Bearer $token")
  pub_large[$b]=$(upload "$C" pub "$work/www/large.bin" "x-hasura-admin-secret: s")
  # Every target must serve the same bytes before anything is measured.
  cmp <(curl -sf "$C/v1/files/${pub_small[$b]}") "$work/www/small.bin"
  cmp <(curl -sf -H "Authorization: Bearer $token" "$C/v1/files/${priv_small[$b]}") "$work/www/small.bin"
  cmp <(curl -sf "$C/v1/files/${pub_large[$b]}") "$work/www/large.bin"
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$C/v1/files/${priv_small[$b]}")" = 404 ] # the rule is really checked
done

results=$work/results.txt
tick=$(getconf CLK_TCK)
cpu_ticks() { # pids... -> utime+stime (clock ticks) of them and their child processes
  local t=0 p
  for p in "$@" $(for q in "$@"; do pgrep -P "$q" || true; done); do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}
run() { # name conns cpu-pid url [header]
  local name=$1 conns=$2 cpid=$3 url=$4 out c0 c1
  c0=$(cpu_ticks "$cpid")
  if [ $# -ge 5 ]; then out=$(wrk -t2 -c"$conns" -d"$dur" --latency -H "$5" "$url"); else out=$(wrk -t2 -c"$conns" -d"$dur" --latency "$url"); fi
  c1=$(cpu_ticks "$cpid")
  local rps bps p50 p99 non2xx reqs cpu_us
  rps=$(awk '/^Requests\/sec/{print $2}' <<<"$out")
  bps=$(awk '/^Transfer\/sec/{v=$2; u=substr(v,length(v)-1); n=v+0; m=(u=="GB")?1024*1024*1024:(u=="MB")?1024*1024:(u=="KB")?1024:1; printf "%.0f", n*m}' <<<"$out")
  p50=$(awk '$1=="50%"{print $2}' <<<"$out")
  p99=$(awk '$1=="99%"{print $2}' <<<"$out")
  non2xx=$(awk '/Non-2xx/{print $NF}' <<<"$out")
  reqs=$(awk '/requests in/{print $1}' <<<"$out")
  cpu_us=$(awk -v d=$((c1 - c0)) -v t="$tick" -v n="$reqs" 'BEGIN{printf "%.1f", (n > 0) ? d / t * 1e6 / n : 0}')
  echo "$name $rps $bps $(to_ms "$p50") $(to_ms "$p99") ${non2xx:-0} $cpu_us" | tee -a "$results"
}
to_ms() { awk -v v="$1" 'BEGIN{n=v+0; if (v ~ /us$/) n/=1000; else if (v ~ /ms$/) n=n; else if (v ~ /s$/) n*=1000; printf "%.3f", n}'; }
coffer_runs() { # round size: every build's scenarios of that size, the build order flipped each round
  local order=("${builds[@]}") b sfx
  [ $(($1 % 2)) = 1 ] || order=($(printf '%s\n' "${builds[@]}" | tac))
  for b in "${order[@]}"; do
    sfx=; [ "${#builds[@]}" = 1 ] || sfx=-$b
    if [ "$2" = 100k ]; then
      run "coffer-public$sfx-100k" 100 "${pid[$b]}" "${url[$b]}/v1/files/${pub_small[$b]}"
      run "coffer-jwt$sfx-100k" 100 "${pid[$b]}" "${url[$b]}/v1/files/${priv_small[$b]}" "Authorization: Bearer $token"
    else
      run "coffer-public$sfx-45m" 50 "${pid[$b]}" "${url[$b]}/v1/files/${pub_large[$b]}"
    fi
  done
}
nginx_pid=${pids[0]}

echo "name req/s bytes/s p50_ms p99_ms non2xx cpu_us/req"
for r in $(seq "$rounds"); do
  run nginx-100k 100 "$nginx_pid" "$N/small.bin"
  coffer_runs "$r" 100k
  [ "$skip_large" = 1 ] || { run nginx-45m 50 "$nginx_pid" "$N/large.bin"; coffer_runs "$r" 45m; }
done
peak_rss=$(awk '/VmHWM/{print $2}' "/proc/${pid[head]}/status")

python3 - "$results" "$idle_rss" "$peak_rss" "$rounds" "$dur" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, rps, bps, p50, p99, bad, cpu = line.split()
    rows.setdefault(name, []).append((float(rps), float(bps), float(p50), float(p99), int(bad), float(cpu)))
med = lambda name, i: statistics.median(r[i] for r in rows[name])
print(f"\nMedians of {sys.argv[4]} alternating rounds of {sys.argv[5]} each (wrk -t2), this machine:")
print("| scenario | req/s | MB/s | p50 ms | p99 ms | CPU µs/req | vs nginx (req/s) | p99 vs nginx | CPU/req vs nginx |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for size, base in (("100k", "nginx-100k"), ("45m", "nginx-45m")):
    if base not in rows:
        continue
    for name in [n for n in rows if n.endswith(size)]:
        print(f"| {name} | {med(name,0):,.0f} | {med(name,1)/1e6:,.1f} | {med(name,2):.2f} | {med(name,3):.2f} | "
              f"{med(name,5):.1f} | {med(name,0)/med(base,0):.2f}x | {med(name,3)/med(base,3):.2f}x | {med(name,5)/med(base,5):.2f}x |")
heads = [n for n in rows if "-head-" in n]
if heads:
    print("\nhead vs base, per round (same round, adjacent runs), then the median of those ratios:")
    for h in heads:
        b = h.replace("-head-", "-base-")
        rps = [x[0] / y[0] for x, y in zip(rows[h], rows[b])]
        cpu = [x[5] / y[5] for x, y in zip(rows[h], rows[b]) if y[5] > 0]
        print(f"  {h.replace('-head', '')}: req/s head/base {' '.join(f'{r:.3f}' for r in rps)} -> median {statistics.median(rps):.3f};"
              f" CPU/req head/base median {statistics.median(cpu):.3f}" if cpu else "")
bad = sum(r[4] for v in rows.values() for r in v)
print(f"\ncoffer RSS: idle after start {int(sys.argv[2])/1024:.1f} MB; peak over the whole run (VmHWM) {int(sys.argv[3])/1024:.1f} MB")
print(f"non-2xx responses: {bad}")
PY
