#!/usr/bin/env bash
# Tenants under load, on this machine, loopback only (coffer with --tenants, SQLite and
# local disk; wrk from apt if missing). Two parts:
#
#   scripts/bench-tenants.sh flood [ROUNDS=5] [DURATION=10s]
#     Tenant "calm" (no limits) is read by wrk -c10 (one 100 KB public file) while
#     tenant "flood" is read by wrk -c50 at once, in three conditions per round, in an
#     order that rotates every round: calm alone (its baseline), calm during a flood of
#     tenant "flood" held to 200 requests/s (burst 50; the rest get 429), and calm
#     during a flood of tenant "open", which has no limit. (A refused request is answered
#     after its Retry-After time, at most 1 s: see admit in app/tenancy.go.) Prints calm's req/s and p99
#     in each, their medians and ratios to the baseline, the flood's status counts,
#     and one refused answer's status line and Retry-After / RateLimit-* headers.
#
#   scripts/bench-tenants.sh many [ROUNDS=3] [DURATION=10s] [TENANTS=1000]
#     The same binary twice, side by side: one server with 1 tenant, one with TENANTS
#     tenants (each with its own host, admin secret and a public file). Prints each
#     server's idle RSS after a restart and after one request to every tenant (each
#     tenant's object graph is built on its first request), and the req/s, p99 and CPU
#     per request of wrk -c50 on one tenant's 100 KB file, alternating the servers.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-flood}
shift || true
export GOFLAGS=${GOFLAGS:--buildvcs=false}
command -v wrk >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
. scripts/lib/loopback.sh
bench_workdir coffer-bench-tenants
./scripts/build.sh "$work" >/dev/null
platform=bench-tenants-platform-secret
head -c $((100 * 1024)) /dev/urandom >"$work/small.bin"

# start NAME: a coffer with tenants on; sets url_NAME and pid_NAME. Restarted with
# the same NAME it keeps its data (and its tenant key).
start() {
  local p; p=$(port)
  [ -f "$work/key-$1" ] || head -c 32 /dev/urandom | base64 >"$work/key-$1"
  "$work/coffer" serve --listen "127.0.0.1:$p" --data-dir "$work/data-$1" --admin-secret s --log-level warn \
    --access-log off --tenants --platform-secret "$platform" --tenant-key "$(cat "$work/key-$1")" \
    --default-tenant-hosts default.test >"$work/log-$1" 2>&1 &
  pids+=($!)
  eval "url_$1=http://127.0.0.1:$p pid_$1=$!"
  wait_port "$p"
}

# tenant URL ID [LIMITS-JSON]: creates tenant ID (host ID.test, admin secret
# ID-admin-secret-0123) with a public bucket "pub" holding small.bin; prints its file id.
tenant() {
  local sec=$2-admin-secret-0123
  curl -sf -H 'Content-Type: application/json' -H "X-Coffer-Platform-Secret: $platform" -H 'Host: default.test' \
    -d "{\"id\":\"$2\",\"hosts\":[\"$2.test\"],\"settings\":{\"adminSecrets\":[\"$sec\"]${3:+,\"limits\":$3}}}" \
    "$1/coffer.admin.v1.TenantService/CreateTenant" >/dev/null
  curl -sf -H "x-hasura-admin-secret: $sec" -H "Host: $2.test" -d '{"id":"pub","public":true}' "$1/v1/buckets" >/dev/null
  curl -sf -H "x-hasura-admin-secret: $sec" -H "Host: $2.test" -F bucket-id=pub -F "file[]=@$work/small.bin" "$1/v1/files" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["processedFiles"][0]["id"])'
}

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# wrk_run CONNS DUR HOST URL: prints "req/s p99_ms non2xx errors requests"
wrk_run() {
  local out
  out=$(wrk -t1 -c"$1" -d"$2" --timeout 5s --latency -H "Host: $3" "$4" </dev/null)
  echo "$(awk '/^Requests\/sec/{print $2}' <<<"$out") $(to_ms "$(awk '$1=="99%"{print $2}' <<<"$out")")" \
    "$(awk '/Non-2xx/{print $NF}' <<<"$out" | grep . || echo 0)" \
    "$(awk '/Socket errors/{gsub(",",""); print $4+$6+$8+$10}' <<<"$out" | grep . || echo 0)" \
    "$(awk '/requests in/{print $1}' <<<"$out")"
}

flood() {
  local rounds=${1:-5} dur=${2:-10s} secs
  secs=${dur%s}
  start s
  local calm flood open
  calm=$(tenant "$url_s" calm) flood=$(tenant "$url_s" flood '{"requestsPerSecond":200,"burst":50}') open=$(tenant "$url_s" open)
  local probe t0
  probe=$(tenant "$url_s" probe '{"requestsPerSecond":0.5,"burst":3}') # its bucket, its upload and one read
  curl -s -o /dev/null -H 'Host: probe.test' "$url_s/v1/files/$probe"
  t0=$(date +%s.%N)
  echo "a refused answer (tenant probe, 0.5 requests/s with a burst of 3: its fourth request at once):"
  curl -s -D - -o /dev/null -H 'Host: probe.test' "$url_s/v1/files/$probe" | grep -Ei '^(HTTP|retry-after|ratelimit)' | tr -d '\r' | sed 's/^/  /'
  awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "  (answered after %.2f s)\n", b-a}'
  local conds=(alone limited open) res=$work/flood.txt
  echo "round condition calm_req/s calm_p99_ms calm_non2xx flood_req/s flood_non2xx flood_requests load1"
  for r in $(seq "$rounds"); do
    local order=("${conds[@]:$(((r - 1) % 3))}" "${conds[@]:0:$(((r - 1) % 3))}")
    for c in "${order[@]}"; do
      local fl=
      case $c in
        limited) wrk_run 50 "$((secs + 2))s" flood.test "$url_s/v1/files/$flood" >"$work/fl" & fl=$! ;;
        open) wrk_run 50 "$((secs + 2))s" open.test "$url_s/v1/files/$open" >"$work/fl" & fl=$! ;;
      esac
      [ -z "$fl" ] || sleep 1
      read -r crps cp99 cnon _ _ < <(wrk_run 10 "$dur" calm.test "$url_s/v1/files/$calm")
      local frps=- fnon=- freq=-
      if [ -n "$fl" ]; then wait "$fl"; read -r frps _ fnon _ freq <"$work/fl"; fi
      echo "$r $c $crps $cp99 $cnon $frps $fnon $freq $(awk '{print $1}' /proc/loadavg)" | tee -a "$res"
    done
  done
  echo
  echo "medians over $rounds rounds ($dur each; calm: wrk -t1 -c10, flood: wrk -t1 -c50):"
  local base_rps base_p99
  base_rps=$(awk '$2=="alone"{print $3}' "$res" | median) base_p99=$(awk '$2=="alone"{print $4}' "$res" | median)
  for c in "${conds[@]}"; do
    local rps p99
    rps=$(awk -v c="$c" '$2==c{print $3}' "$res" | median) p99=$(awk -v c="$c" '$2==c{print $4}' "$res" | median)
    awk -v c="$c" -v r="$rps" -v p="$p99" -v br="$base_rps" -v bp="$base_p99" \
      'BEGIN{printf "  calm %-8s req/s %8.0f (%.2fx alone)  p99 %7.2f ms (%.2fx alone)\n", c, r, r/br, p, p/bp}'
  done
}

many() {
  local rounds=${1:-3} dur=${2:-10s} n=${3:-1000}
  start one
  start many
  local id_one id_many
  id_one=$(tenant "$url_one" t0)
  id_many=$(tenant "$url_many" t0)
  local t0 t1
  t0=$(date +%s.%N)
  for i in $(seq 1 $((n - 1))); do
    curl -sf -H 'Content-Type: application/json' -H "X-Coffer-Platform-Secret: $platform" -H 'Host: default.test' \
      -d "{\"id\":\"t$i\",\"hosts\":[\"t$i.test\"],\"settings\":{\"adminSecrets\":[\"t$i-admin-secret-0123\"]}}" \
      "$url_many/coffer.admin.v1.TenantService/CreateTenant" >/dev/null
  done
  t1=$(date +%s.%N)
  echo "created $((n - 1)) more tenants through TenantService in $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s"
  rss() { awk '/^VmRSS:/{printf "%.1f", $2/1024}' "/proc/$1/status"; }
  anon() { awk '/^RssAnon:/{printf "%.1f", $2/1024}' "/proc/$1/status"; }
  # Both restarted, so the idle figure is of tenants configured, not of the churn
  # of creating them.
  kill "$pid_one" "$pid_many"
  wait "$pid_one" "$pid_many" 2>/dev/null || true
  start one
  start many
  sleep 3
  echo "idle RSS after a restart, no tenant served yet: 1 tenant $(rss "$pid_one") MB (anonymous $(anon "$pid_one")), $n tenants $(rss "$pid_many") MB (anonymous $(anon "$pid_many"))"
  for i in $(seq 1 $((n - 1))); do curl -s -o /dev/null -H "Host: t$i.test" "$url_many/v1/buckets/default"; done
  curl -s -o /dev/null -H 'Host: t0.test' "$url_one/v1/buckets/default"
  sleep 3
  echo "RSS after one request to every tenant (graphs built, at most --tenant-graphs held): 1 tenant $(rss "$pid_one") MB (anonymous $(anon "$pid_one")), $n tenants $(rss "$pid_many") MB (anonymous $(anon "$pid_many"))"
  local res=$work/many.txt
  for s in one many; do # both serve the file before anything is measured
    local u id
    eval "u=\$url_$s id=\$id_$s"
    cmp -s <(curl -sf -H "Host: t0.test" "$u/v1/files/$id") "$work/small.bin" || { echo "bench-tenants: server $s does not serve t0's file" >&2; exit 1; }
  done
  echo "round server req/s p99_ms cpu_us/req non2xx load1"
  for r in $(seq "$rounds"); do
    local order=(one many)
    [ $((r % 2)) = 1 ] || order=(many one)
    for s in "${order[@]}"; do
      local u p id c0 c1
      eval "u=\$url_$s p=\$pid_$s id=\$id_$s"
      c0=$(cpu_ticks "$p")
      read -r rps p99 non _ reqs < <(wrk_run 50 "$dur" t0.test "$u/v1/files/$id")
      c1=$(cpu_ticks "$p")
      echo "$r $s $rps $p99 $(awk -v d=$((c1 - c0)) -v t="$(getconf CLK_TCK)" -v n="$reqs" 'BEGIN{printf "%.1f", d/t*1e6/n}') $non $(awk '{print $1}' /proc/loadavg)" | tee -a "$res"
    done
  done
  echo
  for s in one many; do
    echo "  $s: req/s $(awk -v s="$s" '$2==s{print $3}' "$res" | median), p99 $(awk -v s="$s" '$2==s{print $4}' "$res" | median) ms, CPU $(awk -v s="$s" '$2==s{print $5}' "$res" | median) µs/req (medians)"
  done
  echo "RSS at the end: 1 tenant $(rss "$pid_one") MB, $n tenants $(rss "$pid_many") MB"
}

case $mode in
  flood) flood "$@" ;;
  many) many "$@" ;;
  *) echo "usage: $0 flood|many [...]" >&2; exit 2 ;;
esac
