#!/usr/bin/env bash
# Side-by-side load test of coffer against nginx serving the same files from disk, on
# this machine, loopback only. Installs nginx and wrk from apt if missing.
#
#   scripts/compare-nginx.sh [--base REV] [--tenants] [--no-large] [--only S1,S2] [ROUNDS=3] [DURATION=10s]
#
# --base REV also builds coffer at git revision REV and runs it beside this checkout's,
# alternating the two builds in every round, and prints head/base ratios (the check that
# a refactor kept the hot path's speed). --tenants also runs this checkout's coffer a
# second time with tenants on (--tenants), set up the same way inside tenant "alpha",
# every request routed by its Host (alpha.test), and prints tenant/head ratios (the cost
# of host routing and the tenant's views on the hot path). --no-large skips the 45 MB scenario; --only runs
# just the scenarios named (from the list below).
#
# nginx is set up as a competent operator would: 2 workers (one per core), sendfile,
# open_file_cache (coffer keeps hot files open, so nginx does too), keepalive_requests
# high, no access log; one server block with tcp_nopush off and one with it on, and every
# nginx scenario runs on both. Ratios are against tcp_nopush off.
# Scenarios (wrk -t2; connections; wrk's --timeout):
#   hot-100k   one 100 KB file (c=100, 2 s): nginx; coffer public bucket (anonymous) and
#              private bucket with a JWT checked against an owner rule
#   files-10k  10,000 distinct 100 KB files, round-robin (c=100, 2 s): nginx; coffer public
#   users-1k   1,000 users, each with its own JWT reading its own 100 KB file under the
#              owner rule (c=100, 2 s): nginx serves the same 1,000 files plain; coffer
#   5m         one 5 MB file (c=50, 30 s): nginx; coffer public
#   45m        one 45 MB file (c=50, 30 s): nginx; coffer public
# Every round runs each scenario's targets back to back (the order reversed in even
# rounds), so a noisy machine slows all alike. Each run records req/s, bytes/s, p50, p99,
# the server's CPU per request (utime+stime of the server and its children, /proc),
# wrk's socket errors (connect/read/write/timeout) and non-2xx count, and the 1-min load
# average right after it. scripts/compare-nginx/report.py prints medians and ratios as a
# markdown table; a target with any error or timeout in any round is INVALID and its
# ratios are not given. Also reports the setup time (uploads) and coffer's idle RSS right
# after start (the server alone: its image worker starts with the first transformation,
# which this script does not ask for) and its peak RSS (VmHWM) over the whole run.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD/scripts/compare-nginx
base_rev= skip_large=0 only= tenants=0
while [ $# -gt 0 ]; do
  case $1 in
    --base) base_rev=$2; shift 2 ;;
    --tenants) tenants=1; shift ;;
    --no-large) skip_large=1; shift ;;
    --only) only=$2; shift 2 ;;
    *) break ;;
  esac
done
rounds=${1:-3} dur=${2:-10s}
export GOFLAGS=${GOFLAGS:--buildvcs=false}
nfiles=10000 nusers=1000

need() { command -v "$1" >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null; }; }
need wrk wrk
[ -x /usr/sbin/nginx ] || need nginx nginx-light

. scripts/lib/loopback.sh
bench_workdir coffer-vs-nginx
now() { date +%s.%N; }

# Files: random contents, the same bytes for both servers.
t0=$(now)
mkdir -p "$work/www/many" "$work/www/users" "$work/lists"
head -c $((100 * 1024)) /dev/urandom >"$work/www/small.bin"
head -c $((5 * 1024 * 1024)) /dev/urandom >"$work/www/mid.bin"
head -c $((45 * 1024 * 1024)) /dev/urandom >"$work/www/large.bin"
python3 - "$work/www" "$nfiles" "$nusers" <<'PY'
import os, sys
d, nf, nu = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for sub, pre, n in (("many", "f", nf), ("users", "u", nu)):
    for i in range(n):
        with open(os.path.join(d, sub, f"{pre}{i:05}.bin"), "wb") as f:
            f.write(os.urandom(100 * 1024))
PY
chmod -R a+rX "$work/www"
echo "files written: $nfiles + $nusers + 3 in $(awk -v a="$t0" -v b="$(now)" 'BEGIN{printf "%.1f", b-a}') s" >&2

# nginx: one server block per tcp_nopush setting, the same workers and file cache.
np_off=$(port) np_on=$(port)
{ nginx_main
  echo "  server { listen 127.0.0.1:$np_off; root $work/www; tcp_nopush off; }"
  echo "  server { listen 127.0.0.1:$np_on; root $work/www; tcp_nopush on; }"
  echo "}"; } >"$work/nginx.conf"
/usr/sbin/nginx -c "$work/nginx.conf" -p "$work" &
nginx_pid=$!
pids+=($!)
Noff=http://127.0.0.1:$np_off Non=http://127.0.0.1:$np_on

# coffer: SQLite + disk, JWT (HS256) and an owner rule on bucket priv. With --base REV a
# second coffer built from git revision REV runs beside it, set up the same way, and every
# coffer scenario runs on both, in the alternating order of the round.
./scripts/build.sh "$work" # coffer, and coffer-imager next to it when libvips is installed
builds=(head)
if [ -n "$base_rev" ]; then
  git worktree add -q --detach "$work/base-src" "$base_rev"
  (cd "$work/base-src" && CGO_ENABLED=0 go build -o "$work/base/coffer" ./cmd/coffer)
  git worktree remove --force "$work/base-src"
  builds=(base head)
fi
key=compare-nginx-hs256-key-0123456789abcdef
owner_rules "$work/rules.yaml"
declare -A url pid pub_small priv_small pub_mid pub_large host admin
start_coffer() { # build-name dir-with-coffer [serve flags...]
  local p; p=$(port)
  (cd "$2" && exec ./coffer serve --listen "127.0.0.1:$p" --data-dir "$work/data-$1" --admin-secret s \
    --jwt-secret "{\"type\":\"HS256\",\"key\":\"$key\"}" --rules "$work/rules.yaml" --log-level warn "${@:3}" \
    >"$work/coffer-$1.log" 2>&1) &
  pid[$1]=$!
  pids+=($!)
  url[$1]=http://127.0.0.1:$p host[$1]= admin[$1]=s
}
start_coffer head "$work"
[ -z "$base_rev" ] || start_coffer base "$work/base"
platform=compare-nginx-platform-secret
if [ "$tenants" = 1 ]; then
  start_coffer tenant "$work" --tenants --platform-secret "$platform" --tenant-key "$(head -c 32 /dev/urandom | base64)" \
    --default-tenant-hosts default.test
  builds+=(tenant)
fi
for b in "${builds[@]}"; do
  for _ in $(seq 100); do curl -sf "${url[$b]}/healthz" >/dev/null && curl -sf "$Noff/small.bin" -o /dev/null && break; sleep 0.1; done
done
if [ "$tenants" = 1 ]; then # tenant alpha, with the same JWT key and rules, reached as alpha.test
  host[tenant]=alpha.test admin[tenant]=compare-nginx-tenant-admin
  jwt=$(python3 -c 'import json,sys; print(json.dumps(json.dumps({"type": "HS256", "key": sys.argv[1]})))' "$key")
  curl -sf -H 'Content-Type: application/json' -H "X-Coffer-Platform-Secret: $platform" -H 'Host: default.test' \
    -d "{\"id\":\"alpha\",\"hosts\":[\"alpha.test\"],\"settings\":{\"adminSecrets\":[\"${admin[tenant]}\"],\"jwt\":$jwt}}" \
    "${url[tenant]}/coffer.admin.v1.TenantService/CreateTenant" >/dev/null
  curl -sf -X PUT -H "x-hasura-admin-secret: ${admin[tenant]}" -H 'Host: alpha.test' -H 'Content-Type: application/yaml' \
    --data-binary @"$work/rules.yaml" "${url[tenant]}/v1/rules" >/dev/null
fi
sleep 1
idle_rss=$(awk '/VmRSS/{print $2}' "/proc/${pid[head]}/status")

token=$(python3 "$here/upload.py" token "$key" alice)
upload() { # base-url bucket file auth-header [curl args] -> id
  curl -sf -H "$4" "${@:5}" -F "bucket-id=$2" -F "file[]=@$3" "$1/v1/files" | python3 -c 'import json,sys; print(json.load(sys.stdin)["processedFiles"][0]["id"])'
}
same() { cmp -s <(curl -sf "${@:3}" "$1") "$2" || { echo "compare-nginx: $1 does not serve $2" >&2; exit 1; }; }
# nginx's request lists, and a check that both server blocks serve the bytes.
for i in $(seq 0 $((nfiles - 1))); do printf '/many/f%05d.bin\n' "$i"; done >"$work/lists/nginx-many.txt"
for i in $(seq 0 $((nusers - 1))); do printf '/users/u%05d.bin\n' "$i"; done >"$work/lists/nginx-users.txt"
for n in "$Noff" "$Non"; do
  same "$n/small.bin" "$work/www/small.bin"; same "$n/mid.bin" "$work/www/mid.bin"
  same "$n/many/f09999.bin" "$work/www/many/f09999.bin"; same "$n/users/u00999.bin" "$work/www/users/u00999.bin"
done
setup_times=()
for b in "${builds[@]}"; do
  C=${url[$b]}
  H=(); [ -z "${host[$b]}" ] || H=(-H "Host: ${host[$b]}") # a tenant's requests carry its host
  A=(-H "x-hasura-admin-secret: ${admin[$b]}" "${H[@]}")
  curl -sf "${A[@]}" -d '{"id":"pub","public":true}' "$C/v1/buckets" >/dev/null
  curl -sf "${A[@]}" -d '{"id":"priv"}' "$C/v1/buckets" >/dev/null
  pub_small[$b]=$(upload "$C" pub "$work/www/small.bin" "x-hasura-admin-secret: ${admin[$b]}" "${H[@]}")
  priv_small[$b]=$(upload "$C" priv "$work/www/small.bin" "Authorization: Bearer $token" "${H[@]}")
  pub_mid[$b]=$(upload "$C" pub "$work/www/mid.bin" "x-hasura-admin-secret: ${admin[$b]}" "${H[@]}")
  pub_large[$b]=$(upload "$C" pub "$work/www/large.bin" "x-hasura-admin-secret: ${admin[$b]}" "${H[@]}")
  # Many files and many users: the uploader keeps 8 connections alive in parallel.
  t0=$(now)
  COFFER_HOST=${host[$b]} COFFER_ADMIN_SECRET=${admin[$b]} python3 "$here/upload.py" files "$C" pub "$work/www/many" f "$nfiles" >"$work/ids-$b-many.txt"
  t1=$(now)
  COFFER_HOST=${host[$b]} python3 "$here/upload.py" users "$C" "$key" priv "$work/www/users" u "$nusers" >"$work/ids-$b-users.txt"
  t2=$(now)
  setup_times+=("$(awk -v b="$b" -v a="$t0" -v m="$t1" -v z="$t2" -v nf="$nfiles" -v nu="$nusers" \
    'BEGIN{printf "%s: %d files (20 per request) in %.1f s, %d users (one file each) in %.1f s", b, nf, m-a, nu, z-m}')")
  awk '{print "/v1/files/" $2}' "$work/ids-$b-many.txt" >"$work/lists/coffer-$b-many.txt"
  awk '{print "/v1/files/" $2, $3}' "$work/ids-$b-users.txt" >"$work/lists/coffer-$b-users.txt"
  [ "$(wc -l <"$work/lists/coffer-$b-many.txt")" = "$nfiles" ] && [ "$(wc -l <"$work/lists/coffer-$b-users.txt")" = "$nusers" ]
  # Every target must serve the same bytes before anything is measured, and the rule must
  # really be checked: no token, or another user's token, finds nothing.
  same "$C/v1/files/${pub_small[$b]}" "$work/www/small.bin" "${H[@]}"
  same "$C/v1/files/${priv_small[$b]}" "$work/www/small.bin" -H "Authorization: Bearer $token" "${H[@]}"
  same "$C/v1/files/${pub_mid[$b]}" "$work/www/mid.bin" "${H[@]}"
  same "$C/v1/files/${pub_large[$b]}" "$work/www/large.bin" "${H[@]}"
  for i in 0 4321 $((nfiles - 1)); do
    read -r name id < <(sed -n "$((i + 1))p" "$work/ids-$b-many.txt")
    same "$C/v1/files/$id" "$work/www/many/$name" "${H[@]}"
  done
  for i in 0 500 $((nusers - 1)); do
    read -r name id tok < <(sed -n "$((i + 1))p" "$work/ids-$b-users.txt")
    same "$C/v1/files/$id" "$work/www/users/$name" -H "Authorization: Bearer $tok" "${H[@]}"
  done
  read -r _ id0 _ < <(sed -n 1p "$work/ids-$b-users.txt")
  read -r _ _ tok1 < <(sed -n 2p "$work/ids-$b-users.txt")
  [ "$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" "$C/v1/files/${priv_small[$b]}")" = 404 ]
  [ "$(curl -s -o /dev/null -w '%{http_code}' "${H[@]}" -H "Authorization: Bearer $tok1" "$C/v1/files/$id0")" = 404 ]
done
printf 'setup %s\n' "${setup_times[@]}" >&2

results=$work/results.txt
tick=$(getconf CLK_TCK)
cpu_ticks() { # pids... -> utime+stime (clock ticks) of them and their child processes
  local t=0 p
  for p in "$@" $(for q in "$@"; do pgrep -P "$q" || true; done); do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}
run() { # round scenario target conns timeout cpu-pid url [request-list-file | header] [host]
  local w=(wrk -t2 -c"$4" -d"$dur" --timeout "$5" --latency) out c0 c1
  [ -z "${9:-}" ] || w+=(-H "Host: $9")
  if [ -f "${8:-}" ]; then w+=(-s "$here/cycle.lua" "$7" -- "$8")
  elif [ -n "${8:-}" ]; then w+=(-H "$8" "$7")
  else w+=("$7"); fi
  c0=$(cpu_ticks "$6")
  out=$("${w[@]}" </dev/null)
  c1=$(cpu_ticks "$6")
  local rps bps p50 p99 non2xx reqs cpu_us load errs
  rps=$(awk '/^Requests\/sec/{print $2}' <<<"$out")
  bps=$(awk '/^Transfer\/sec/{v=$2; u=substr(v,length(v)-1); n=v+0; m=(u=="GB")?1024*1024*1024:(u=="MB")?1024*1024:(u=="KB")?1024:1; printf "%.0f", n*m}' <<<"$out")
  p50=$(awk '$1=="50%"{print $2}' <<<"$out")
  p99=$(awk '$1=="99%"{print $2}' <<<"$out")
  errs=$(awk '/Socket errors:/{gsub(",", ""); e=$4" "$6" "$8" "$10} END{print (e == "") ? "0 0 0 0" : e}' <<<"$out")
  non2xx=$(awk '/Non-2xx or 3xx responses:/{print $NF}' <<<"$out")
  reqs=$(awk '/requests in/{print $1}' <<<"$out")
  load=$(awk '{print $1}' /proc/loadavg)
  cpu_us=$(awk -v d=$((c1 - c0)) -v t="$tick" -v n="$reqs" 'BEGIN{printf "%.1f", (n > 0) ? d / t * 1e6 / n : 0}')
  echo "$1 $2 $3 $rps $bps $(to_ms "$p50") $(to_ms "$p99") $cpu_us $load $errs ${non2xx:-0} $reqs" | tee -a "$results"
}
targets() { # scenario -> its targets, one a line: NAME|PID|URL|[LIST-FILE or HEADER]|[HOST] (| as separator: empty fields stay fields)
  local s=$1 b sfx path= list=
  case $s in
    hot-100k) path=/small.bin ;; 5m) path=/mid.bin ;; 45m) path=/large.bin ;;
    files-10k) list=$work/lists/nginx-many.txt ;; users-1k) list=$work/lists/nginx-users.txt ;;
  esac
  printf '%s|%s|%s|%s\n' nginx-nopush-off "$nginx_pid" "$Noff$path" "$list" nginx-nopush-on "$nginx_pid" "$Non$path" "$list"
  for b in "${builds[@]}"; do
    sfx=; [ "${#builds[@]}" = 1 ] || sfx=-$b
    local C=${url[$b]}/v1/files p=${pid[$b]} h=${host[$b]}
    case $s in
      hot-100k) printf 'coffer-public%s|%s|%s||%s\n' "$sfx" "$p" "$C/${pub_small[$b]}" "$h"
        printf 'coffer-jwt%s|%s|%s|%s|%s\n' "$sfx" "$p" "$C/${priv_small[$b]}" "Authorization: Bearer $token" "$h" ;;
      files-10k) printf 'coffer-public%s|%s|%s|%s|%s\n' "$sfx" "$p" "${url[$b]}" "$work/lists/coffer-$b-many.txt" "$h" ;;
      users-1k) printf 'coffer-jwt%s|%s|%s|%s|%s\n' "$sfx" "$p" "${url[$b]}" "$work/lists/coffer-$b-users.txt" "$h" ;;
      5m) printf 'coffer-public%s|%s|%s||%s\n' "$sfx" "$p" "$C/${pub_mid[$b]}" "$h" ;;
      45m) printf 'coffer-public%s|%s|%s||%s\n' "$sfx" "$p" "$C/${pub_large[$b]}" "$h" ;;
    esac
  done
}

scenarios=(hot-100k files-10k users-1k 5m)
[ "$skip_large" = 1 ] || scenarios+=(45m)
[ -z "$only" ] || IFS=, read -ra scenarios <<<"$only"
for s in "${scenarios[@]}"; do
  case $s in hot-100k | files-10k | users-1k | 5m | 45m) ;; *) echo "compare-nginx: unknown scenario $s" >&2; exit 2 ;; esac
done
echo "round scenario target req/s bytes/s p50_ms p99_ms cpu_us/req load1 connect read write timeout non2xx requests"
for r in $(seq "$rounds"); do
  for s in "${scenarios[@]}"; do
    conns=100 timeout=2s
    case $s in 5m | 45m) conns=50 timeout=30s ;; esac
    order=cat; [ $((r % 2)) = 1 ] || order=tac
    while IFS='|' read -r name tpid turl extra thost; do
      run "$r" "$s" "$name" "$conns" "$timeout" "$tpid" "$turl" "$extra" "$thost"
    done < <(targets "$s" | $order)
  done
done
peak_rss=$(awk '/VmHWM/{print $2}' "/proc/${pid[head]}/status")

python3 "$here/report.py" "$results" "$rounds" "$dur"
echo
printf 'setup %s\n' "${setup_times[@]}"
awk -v i="$idle_rss" -v p="$peak_rss" 'BEGIN{printf "coffer RSS: idle after start %.1f MB; peak over the whole run (VmHWM) %.1f MB\n", i/1024, p/1024}'
