#!/usr/bin/env bash
# CPU per cached 100 KB GET of nginx, the net/http floor (bench/floor: http.ServeContent
# of an open file and nothing else), the Go floor (bench/floor -raw: no net/http, a fixed
# header and sendfile per request head) and coffer (public bucket, and a JWT checked
# against an owner rule), side by side on loopback, alternating targets in every round
# (the order rotates each round), with medians of req/s and CPU µs per request (from
# /proc: utime+stime of the server over the wrk run) and ratios to nginx and to the
# floor. With --base REV also coffer built at git revision REV (before/after check).
#
#   scripts/hotpath-floor.sh [--base REV] [ROUNDS=3] [DURATION=10s]
#
# nginx: 2 workers, sendfile on, tcp_nopush off, open_file_cache on, no access log.
set -euo pipefail
cd "$(dirname "$0")/.."
base_rev=
[ "${1:-}" != --base ] || { base_rev=$2; shift 2; }
rounds=${1:-3} dur=${2:-10s}
export GOFLAGS=${GOFLAGS:--buildvcs=false}
command -v wrk >/dev/null && [ -x /usr/sbin/nginx ] || { echo "needs wrk and nginx (apt-get install wrk nginx-light)" >&2; exit 1; }
. scripts/lib/loopback.sh
bench_workdir hotpath-floor
hot_file

np=$(port)
{ nginx_main; echo "  tcp_nopush off;"; echo "  server { listen 127.0.0.1:$np; root $work/www; }"; echo "}"; } >"$work/nginx.conf"
/usr/sbin/nginx -c "$work/nginx.conf" -p "$work" &
pids+=($!)
declare -A url pid
url[nginx]=http://127.0.0.1:$np/small.bin pid[nginx]=$!

go build -o "$work/floor" ./bench/floor
fp=$(port)
"$work/floor" -listen "127.0.0.1:$fp" -file "$work/www/small.bin" &
pids+=($!)
url[floor]=http://127.0.0.1:$fp/small.bin pid[floor]=$!
rp=$(port)
"$work/floor" -raw -listen "127.0.0.1:$rp" -file "$work/www/small.bin" &
pids+=($!)
url[go-raw]=http://127.0.0.1:$rp/small.bin pid[go-raw]=$!

builds=(head)
CGO_ENABLED=0 go build -o "$work/head/coffer" ./cmd/coffer
if [ -n "$base_rev" ]; then # build REV from a detached worktree, removed at once
  src=$work/base-src builds=(base head)
  git worktree add -q --detach "$src" "$base_rev" && (cd "$src" && CGO_ENABLED=0 go build -o "$work/base/coffer" ./cmd/coffer)
  git worktree remove --force "$src"
fi
key=hotpath-floor-hs256-key-0123456789abcdef
printf '%s\n' 'rules:' '  - role: user' '    buckets: [priv]' \
  '    upload: {presets: {uploaded_by_user_id: X-Hasura-User-Id}}' \
  '    read: {filter: {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}}' >"$work/rules.yaml"
token=$(python3 scripts/mint-jwt.py "$key")
declare -A hdr
targets=(nginx floor go-raw)
for b in "${builds[@]}"; do
  p=$(port) C=http://127.0.0.1:$p
  "$work/$b/coffer" serve --listen "127.0.0.1:$p" --data-dir "$work/data-$b" --admin-secret s \
    --jwt-secret "{\"type\":\"HS256\",\"key\":\"$key\"}" --rules "$work/rules.yaml" --log-level warn >"$work/coffer-$b.log" 2>&1 &
  pids+=($!)
  cpid=$!
  for _ in $(seq 100); do curl -sf "$C/healthz" >/dev/null && break; sleep 0.1; done
  curl -sf -H "x-hasura-admin-secret: s" -d '{"id":"pub","public":true}' "$C/v1/buckets" >/dev/null
  curl -sf -H "x-hasura-admin-secret: s" -d '{"id":"priv"}' "$C/v1/buckets" >/dev/null
  up() { curl -sf -H "$2" -F "bucket-id=$1" -F "file[]=@$work/www/small.bin" "$C/v1/files" | python3 -c 'import json,sys; print(json.load(sys.stdin)["processedFiles"][0]["id"])'; }
  url[$b-public]=$C/v1/files/$(up pub "x-hasura-admin-secret: s") pid[$b-public]=$cpid
  url[$b-jwt]=$C/v1/files/$(up priv "Authorization: Bearer $token") pid[$b-jwt]=$cpid hdr[$b-jwt]="Authorization: Bearer $token"
  targets+=("$b-public" "$b-jwt")
done
for t in "${targets[@]}"; do # every target serves the same bytes before anything is measured
  cmp <(curl -sf ${hdr[$t]:+-H "${hdr[$t]}"} "${url[$t]}") "$work/www/small.bin"
done

tick=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
cpu_of() { local t=0 p; for p in "$1" $(pgrep -P "$1" || true); do t=$((t + $(ticks "$p"))); done; echo $t; }
results=$work/results.txt
echo "round target req/s cpu_us/req load1"
for r in $(seq "$rounds"); do
  n=${#targets[@]} order=()
  for i in $(seq 0 $((n - 1))); do order+=("${targets[$(((i + r) % n))]}"); done
  for t in "${order[@]}"; do
    c0=$(cpu_of "${pid[$t]}")
    out=$(wrk -t2 -c100 -d"$dur" ${hdr[$t]:+-H "${hdr[$t]}"} "${url[$t]}")
    c1=$(cpu_of "${pid[$t]}")
    reqs=$(awk '/requests in/{print $1}' <<<"$out")
    bad=$(awk '/Non-2xx|Socket errors/{print}' <<<"$out")
    [ -z "$bad" ] || { echo "$t: $bad" >&2; exit 1; }
    echo "$r $t $(awk '/^Requests\/sec/{print $2}' <<<"$out") $(awk -v d=$((c1 - c0)) -v k="$tick" -v n="$reqs" 'BEGIN{printf "%.1f", d / k * 1e6 / n}') $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$results"
  done
done
python3 - "$results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    _, t, rps, cpu, load = line.split()
    rows.setdefault(t, []).append((float(rps), float(cpu), float(load)))
med = lambda t, i: statistics.median(r[i] for r in rows[t])
print("\n| target | req/s | CPU µs/req | CPU vs nginx | CPU vs floor | load1 (median) |")
print("|---|---:|---:|---:|---:|---:|")
for t in rows:
    print(f"| {t} | {med(t,0):,.0f} | {med(t,1):.1f} | {med(t,1)/med('nginx',1):.2f}x | {med(t,1)/med('floor',1):.2f}x | {med(t,2):.1f} |")
PY
