# Shared by the side-by-side benchmark scripts (compare-nginx.sh, compare-h2c.sh,
# hotpath-floor.sh, bench-upload.sh) and test-services.sh: sourced, not run.
#
# bench_workdir NAME: a fresh world-readable work directory in $work (nginx workers
# read files there), $pids for the servers started, all killed and the directory
# removed when the script exits.
bench_workdir() {
  work=$(mktemp -d "/tmp/$1.XXXXXX")
  chmod 755 "$work"
  pids=()
  trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"' EXIT
}

# port: a free TCP port on 127.0.0.1.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# wait_port PORT: wait up to 10 s for something to listen on 127.0.0.1:PORT; says so
# on stderr and fails if nothing does.
wait_port() {
  for _ in $(seq 1 200); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  echo "nothing listens on 127.0.0.1:$1 after 10 s" >&2
  return 1
}

# nginx_main: the top of an nginx.conf as an operator sets one up for static files (2
# workers, no access log, sendfile, open_file_cache, long keep-alive, temp paths in
# $work/tmp), with the http block left open for the caller's server blocks.
nginx_main() {
  local t=$work/tmp
  mkdir -p "$t"
  cat <<NGINX
worker_processes 2;
worker_rlimit_nofile 20000;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
daemon off;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  open_file_cache max=20000 inactive=60s;
  open_file_cache_valid 60s;
  keepalive_requests 1000000;
  client_body_temp_path $t; proxy_temp_path $t; fastcgi_temp_path $t;
  uwsgi_temp_path $t; scgi_temp_path $t;
NGINX
}

# owner_rules FILE: the rules the JWT targets run under: role user reads, in bucket
# priv, only the files it uploaded (uploaded_by_user_id preset to the caller).
owner_rules() {
  cat >"$1" <<'RULES'
rules:
  - role: user
    buckets: [priv]
    upload: {presets: {uploaded_by_user_id: X-Hasura-User-Id}}
    read: {filter: {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}}
RULES
}

# hot_file: $work/www/small.bin, 100 KB of random bytes readable by nginx's workers.
hot_file() {
  mkdir -p "$work/www"
  head -c $((100 * 1024)) /dev/urandom >"$work/www/small.bin"
  chmod 644 "$work/www/small.bin"
}

# median: the median of the numbers on stdin, one a line.
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }

# to_ms DURATION: a wrk duration (850.00us, 1.20ms, 2.00s) in milliseconds.
to_ms() { awk -v v="$1" 'BEGIN{n=v+0; if (v ~ /us$/) n/=1000; else if (v ~ /ms$/) n=n; else if (v ~ /s$/) n*=1000; printf "%.3f", n}'; }
