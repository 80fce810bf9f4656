#!/usr/bin/env bash
# Side-by-side load test of coffer's sites (the pull-through edge cache in front of an
# upstream) against nginx with proxy_cache, in front of the same upstream, on this
# machine, loopback only, with `coffer bench --scenario spa_site`: virtual users load an
# SPA's index.html and bundle in order (Accept-Encoding: br, gzip), then its 10 largest
# assets, then pause 1 s, along shortened reference stages.
#
#   scripts/compare-sites.sh                 # environment knobs below
#   BASE=bcae0d0 FRONTS=coffer,base scripts/compare-sites.sh   # this checkout against REV
#   ROUNDS=3 STAGES=10@10s,0@5s,40@20s,40@10s,0@5s,3000@30s,0@10s FRONTS=nginx,coffer,coffer+GOMAXPROCS=1 \
#     COFFER_ARGS='--debug-listen 6060' COFFER_ENV='GOMEMLIMIT=160MiB' COFFER_BIN=/tmp/coffer \
#     EDGE_CACHE_SIZE=2147483648 OUT=/tmp/compare-sites.md scripts/compare-sites.sh
#
# The world, all on 127.0.0.1:
#   UPSTREAM  one nginx serving the fixture (`coffer bench --scenario spa_site
#             --fixtures-dir`: index.html, 12 hashed JS/CSS files with .gz and .br
#             siblings, 20 assets of 0.5-8 MB) as a plain static origin: ETag and
#             Last-Modified (nginx's defaults), Cache-Control: public, max-age=60 on
#             every answer, gzip_static and brotli_static so that it answers the
#             encoding asked for from the precompressed siblings. Its access log counts
#             the fetches each front makes (the hit ratio below).
#   nginx     proxy_cache as a competent operator sets it up (see front_nginx_conf).
#   coffer    (and coffer+KEY=VALUE: the same with KEY=VALUE in its environment, e.g.
#             coffer+GOMAXPROCS=1, each its own process, data and cache)
#   base      with BASE=REV: coffer built at git revision REV (in a temporary worktree),
#             set up as coffer; FRONTS then defaults to nginx,coffer,base and the report
#             adds the coffer/base ratios (the check that a change kept the sites' speed)
#             `coffer serve` with one site, host spa.test, route /* to the upstream
#             (`coffer admin sites create`), SPA fallback /index.html, the edge cache of
#             EDGE_CACHE_SIZE bytes, its audit log on (the default); loopback
#             origins allowed (--webhook-allow-networks 127.0.0.0/8: the SSRF guard
#             that webhooks and origins share refuses them by default).
# Every run's JSON, the configurations and the result lines are kept in ${OUT%.md}.runs/.
# Both fronts log every request: coffer's audit log is a feature and stays on, so nginx
# keeps an access log too (buffered 64 KB, flushed every second, with
# $upstream_cache_status).
#
# Runs: a COLD pass per front first (empty cache: the front's first run after start),
# then ROUNDS warm rounds alternating the fronts (nginx coffer, then coffer nginx, ...).
# Each run records bytes/s (bodies as sent: compressed bytes count as sent), req/s,
# p50/p95/p99 per request, errors (status >= 400 or transport) and timeouts, the front's
# peak RSS (summed over its processes: nginx's master and workers, which double-counts
# their shared cache zone) and CPU seconds per request (utime+stime from /proc of the
# front and its children), the share of requests the upstream did not see (hit ratio, by
# requests and by bytes), nginx's own $upstream_cache_status counts, and the 1-min load
# average. The report (stdout and OUT) gives the cold pass, the medians of the warm
# rounds and the ratios coffer/nginx. The upstream's CPU is not counted for either front.
#
# The coffer side needs `coffer admin sites` and `coffer serve --edge-cache-size`; a
# build without them runs the nginx side alone and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD/scripts/compare-sites
rounds=${ROUNDS:-3}
stages=${STAGES:-10@10s,0@5s,40@20s,40@10s,0@5s,3000@30s,0@10s}
base_rev=${BASE:-}
fronts=${FRONTS:-nginx,coffer${base_rev:+,base}}
out=${OUT:-/tmp/compare-sites.md}
keep=${out%.md}.runs # every run's JSON (coffer bench --json), the configurations and the result lines
edge_size=${EDGE_CACHE_SIZE:-2147483648}
host=spa.test
export GOFLAGS=${GOFLAGS:--buildvcs=false}

need_pkg() { dpkg -s "$1" >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null; }; }
[ -x /usr/sbin/nginx ] || need_pkg nginx-light
need_pkg libnginx-mod-http-brotli-static
mods=/usr/lib/nginx/modules

. scripts/lib/loopback.sh
bench_workdir compare-sites
ulimit -n "$(ulimit -Hn)" # 3,000 virtual users hold 3,000 connections
www=$work/www
rm -rf "$keep" && mkdir -p "$keep"
if [ -n "${COFFER_BIN:-}" ]; then cp "$COFFER_BIN" "$work/coffer"; else CGO_ENABLED=0 go build -o "$work/coffer" ./cmd/coffer; fi
if [ -n "$base_rev" ]; then
  git worktree add -q --detach "$work/base-src" "$base_rev"
  (cd "$work/base-src" && CGO_ENABLED=0 go build -o "$work/base/coffer" ./cmd/coffer)
  git worktree remove --force "$work/base-src"
fi
"$work/coffer" bench --scenario spa_site --fixtures-dir "$www" >&2
chmod -R a+rX "$www"

# nginx_top NAME: the main context of an nginx of ours, its files named after NAME.
nginx_top() {
  mkdir -p "$work/tmp-$1"
  cat <<NGINX
worker_processes auto;
worker_rlimit_nofile 20000;
pid $work/$1.pid;
error_log $work/$1-error.log warn;
daemon off;
events { worker_connections 16384; }
NGINX
}
temp_paths() { local t=$work/tmp-$1; echo "client_body_temp_path $t/b; proxy_temp_path $t/p; fastcgi_temp_path $t/f; uwsgi_temp_path $t/u; scgi_temp_path $t/s;"; }

# The upstream: a plain static origin. Every request is logged (not timed: the fronts'
# fetches are what it counts).
op=$(port)
{ echo "load_module $mods/ngx_http_brotli_static_module.so;"
  nginx_top origin
  cat <<NGINX
http {
  include /etc/nginx/mime.types;
  $(temp_paths origin)
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  open_file_cache max=1000 inactive=60s;
  log_format fetch '\$status \$body_bytes_sent';
  access_log $work/origin-access.log fetch;
  server {
    listen 127.0.0.1:$op;
    root $www;
    gzip_static on;
    brotli_static on;
    gzip_vary on;
    add_header Cache-Control "public, max-age=60";
  }
}
NGINX
} >"$work/origin.conf"
/usr/sbin/nginx -c "$work/origin.conf" -p "$work" &
pids+=($!)
wait_port "$op"

# front_nginx_conf PORT: nginx with proxy_cache in front of the upstream, as a
# competent operator configures it:
# - a disk cache (keys_zone for ~500k keys, max_size = coffer's edge size, entries
#   unused for 10 minutes dropped, files written in place: use_temp_path=off);
# - coalescing (proxy_cache_lock: one upstream fetch per key, the others wait), stale
#   answers while updating or when the upstream fails, refreshed in the background,
#   and conditional revalidation (If-None-Match / If-Modified-Since) of expired entries;
# - the upstream's Cache-Control (max-age=60) wins; proxy_cache_valid is the default
#   for answers without it (200 for 60 s, 404 for 10 s, as coffer's edge);
# - keep-alive connections to the upstream (upstream block, HTTP/1.1, no Connection);
# - compression: gzip_static/brotli_static need local files, which a proxy has not, so
#   the front asks the upstream for the one encoding the client prefers (br, then gzip,
#   normalized into $ae) and keys the cache on it, so that the upstream's precompressed
#   siblings are served and cached per encoding (Vary is then redundant and ignored for
#   the key, still sent to clients); `gzip on` compresses what the upstream sent plain;
# - sendfile and tcp_nopush for the cached files, worker_processes auto (2 here),
#   16,384 connections per worker, a listen backlog of 4,096 (Go's listener, coffer's,
#   takes net.core.somaxconn: 4,096 here; nginx's default is 511);
# - SPA fallback like coffer's route: a 404 from the upstream serves /index.html;
# - the access log on, buffered, with $upstream_cache_status (see above).
front_nginx_conf() {
  nginx_top front
  cat <<NGINX
http {
  $(temp_paths front)
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  keepalive_timeout 75s;
  log_format cache '\$upstream_cache_status \$status \$body_bytes_sent';
  access_log $work/front-access.log cache buffer=64k flush=1s;
  proxy_cache_path $work/front-cache levels=1:2 keys_zone=spa:64m max_size=$edge_size inactive=10m use_temp_path=off;
  upstream origin {
    server 127.0.0.1:$op;
    keepalive 64;
  }
  map \$http_accept_encoding \$ae {
    default "";
    "~*(^|[ ,])br([ ,;]|\$)" br;
    "~*(^|[ ,])gzip([ ,;]|\$)" gzip;
  }
  gzip on;
  gzip_proxied any;
  gzip_types text/css application/javascript application/json image/svg+xml;
  gzip_vary on;
  server {
    listen 127.0.0.1:$1 backlog=4096;
    location / {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Accept-Encoding \$ae;
      proxy_cache spa;
      proxy_cache_key \$scheme\$host\$request_uri\$ae;
      proxy_ignore_headers Vary;
      proxy_cache_valid 200 60s;
      proxy_cache_valid 404 10s;
      proxy_cache_lock on;
      proxy_cache_lock_timeout 30s;
      proxy_cache_use_stale error timeout updating http_500 http_502 http_503 http_504;
      proxy_cache_background_update on;
      proxy_cache_revalidate on;
      proxy_intercept_errors on;
      error_page 404 = /index.html;
      add_header X-Cache-Status \$upstream_cache_status;
    }
  }
}
NGINX
}

declare -A url pid
start_nginx_front() {
  local p; p=$(port)
  front_nginx_conf "$p" >"$work/front.conf"
  /usr/sbin/nginx -c "$work/front.conf" -p "$work" &
  pid[nginx]=$! url[nginx]=http://127.0.0.1:$p/
  pids+=($!)
  wait_port "$p"
}

# start_coffer_front NAME [ENV]: coffer serve with an empty data directory and the site
# created through the admin CLI, as front NAME (base: the BASE build), with the extra
# environment ENV (KEY=VALUE) besides COFFER_ENV; fails when this build has no sites.
start_coffer_front() {
  local name=$1 extra=${2:-} p bin=$work/coffer; p=$(port)
  [ "$name" != base ] || bin=$work/base/coffer
  "$bin" admin sites create --help 2>&1 | grep -q -e '--file' || { echo "this coffer has no 'admin sites create --file'" >&2; return 1; }
  "$bin" serve --help 2>&1 | grep -q -e '--edge-cache-size' || { echo "this coffer has no 'serve --edge-cache-size'" >&2; return 1; }
  env ${COFFER_ENV:-} $extra "$bin" serve --listen "127.0.0.1:$p" --data-dir "$work/data-$p" --admin-secret s \
    --edge-cache-size "$edge_size" --log-level warn \
    --webhook-allow-networks 127.0.0.0/8 ${COFFER_ARGS:-} >"$work/coffer-$p.log" 2>&1 &
  pid[$name]=$! url[$name]=http://127.0.0.1:$p/
  pids+=($!)
  wait_port "$p" || { cat "$work/coffer-$p.log" >&2; return 1; }
  cat >"$work/site.json" <<JSON
{"id": "spa", "hosts": ["$host"],
 "routes": [{"path": "/*", "target": {"http": {"url": "http://127.0.0.1:$op/", "precompressed": true}}, "fallback": "/index.html"}]}
JSON
  "$bin" admin --server "http://127.0.0.1:$p" --admin-secret s sites create --file "$work/site.json" >&2 || return 1
}

results=$work/results.txt
IFS=, read -ra want <<<"$fronts"
active=()
for f in "${want[@]}"; do
  case $f in
    nginx) start_nginx_front; active+=(nginx) ;;
    coffer | coffer+*=*)
      extra=; [ "$f" = coffer ] || extra=${f#coffer+}
      if start_coffer_front "$f" "$extra"; then active+=("$f"); else echo "compare-sites: $f NOT RUN (see above)" >&2; fi ;;
    base)
      [ -n "$base_rev" ] || { echo "compare-sites: front base needs BASE=REV" >&2; exit 2; }
      if start_coffer_front base; then active+=(base); else echo "compare-sites: base NOT RUN (see above)" >&2; fi ;;
    *) echo "compare-sites: unknown front $f (nginx, coffer, coffer+KEY=VALUE or base)" >&2; exit 2 ;;
  esac
done
[ "${#active[@]}" -gt 0 ] || exit 1

# check_front NAME: the front serves the fixture's bytes as the upstream has them
# (plain), and the main bundle file compressed. Run after the cold pass, whose caches it
# would otherwise warm; a front that fails it invalidates the whole run.
check_front() {
  local u=${url[$1]} f enc
  for f in index.html $(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["bundle"][1]["path"], m["assets"][0]["path"])' "$www/spa-manifest.json"); do
    cmp -s <(curl -sf -H "Host: $host" -H 'Accept-Encoding: identity' "$u$f") "$www/$f" || { echo "compare-sites: $1 does not serve $f" >&2; exit 1; }
  done
  f=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bundle"][1]["path"])' "$www/spa-manifest.json")
  enc=$(curl -sf -o /dev/null -D - -H "Host: $host" -H 'Accept-Encoding: br, gzip' "$u$f" | tr -d '\r' | awk -F': ' 'tolower($1)=="content-encoding"{print $2}')
  echo "$1: serves the fixture; $f with Accept-Encoding br, gzip: Content-Encoding '${enc:-none}'" | tee -a "$results.notes" >&2
}

lines() { if [ -f "$1" ]; then wc -l <"$1"; else echo 0; fi; }
# run PHASE ROUND FRONT: one spa_site run against FRONT, one line into $results.
run() {
  local j=$work/run-$1-$2-$3.json o0 n0 o1 ob cache=-
  o0=$(lines "$work/origin-access.log") n0=$(lines "$work/front-access.log")
  "$work/coffer" bench --scenario spa_site --fixtures-dir "$www" --url "${url[$3]}" --host "$host" \
    --stages "$stages" --server-pid "${pid[$3]}" --json "$j" --quiet >"$j.txt" 2>&1 || { cat "$j.txt" >&2; exit 1; }
  sleep 2 # nginx flushes its buffered access log within 1 s
  o1=$(lines "$work/origin-access.log")
  ob=$(awk -v skip="$o0" 'NR > skip {s += $2} END {print s + 0}' "$work/origin-access.log")
  [ "$3" != nginx ] || cache=$(awk -v skip="$n0" 'NR > skip {c[$1]++} END {for (k in c) printf "%s%s=%d", (n++ ? "," : ""), k, c[k]}' "$work/front-access.log")
  python3 "$here/report.py" line "$j" "$1" "$2" "$3" $((o1 - o0)) "$ob" "$cache" "$(awk '{print $1}' /proc/loadavg)" | tee -a "$results" >&2
  python3 "$here/report.py" kinds "$j" "$1" "$2" "$3" | tee -a "$results.notes" >&2
  cp "$j" "$keep/"
}

echo "stages $stages; fronts ${active[*]}; rounds $rounds (after the cold pass)" >&2
for f in "${active[@]}"; do run cold 0 "$f"; done
for f in "${active[@]}"; do check_front "$f"; done
sleep 2 # the checks' log lines are flushed before the next run counts its own
for r in $(seq "$rounds"); do
  order=("${active[@]}")
  [ $((r % 2)) = 1 ] || order=($(printf '%s\n' "${active[@]}" | tac))
  for f in "${order[@]}"; do run warm "$r" "$f"; done
done
for f in "${active[@]}"; do
  awk -v f="$f" '/VmHWM/{printf "%s: VmHWM of the main process over the whole run %.1f MB\n", f, $2/1024}' "/proc/${pid[$f]}/status" >>"$results.notes"
done
python3 "$here/report.py" table "$results" "$stages" "$rounds" "$results.notes" | tee "$out"
cp "$results" "$results.notes" "$work"/*.conf "$keep/" 2>/dev/null || true
[ ! -f "$work/site.json" ] || cp "$work/site.json" "$keep/"
echo "(written to $out; runs in $keep)" >&2
