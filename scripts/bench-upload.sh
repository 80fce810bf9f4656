#!/usr/bin/env bash
# Measures uploads against the disk. For each coffer binary given (default: one built
# from this tree) it starts `coffer serve` on 127.0.0.1 with SQLite and blobs on local
# disk, then:
#   1. a 1 GiB multipart upload with curl, against `cp` and `cp` + `sync` of the same
#      file on the same filesystem, every copy and upload kept until the end, as a
#      server keeps its uploads (KEEP=0 deletes each at once, so the next one reuses
#      its page-cache pages: a best case for buffered writes that production does not
#      see), and against `dd oflag=direct conv=fsync` (1 MiB writes past the page cache,
#      as coffer writes large files), ROUNDS rounds alternating (cp, cp+sync, dd, server A,
#      server B, ...), medians; server CPU seconds (utime+stime from /proc/PID/stat,
#      and the user and system shares) around each upload; the server's peak RSS
#      (VmHWM) at the end;
#   2. 100 KB uploads at c=50: wrk with a Lua script POSTing one multipart body, and
#      `coffer bench --scenario upload_small_file` (uploads are deleted after the run),
#      alternating servers, with each server's CPU µs per upload;
#   3. the disk's own floor for step 2: 50 threads each writing 100 KB files the way
#      coffer's fs blob store does (temp file, fsync, rename, fsync of the directory),
#      no HTTP and no database, as files per second;
#   4. step 2 again on PostgreSQL when COFFER_TEST_DATABASE_URL (or COFFER_TEST_PG_URL)
#      is set (scripts/test-services.sh
#      sets it): one fresh database per server.
#   scripts/bench-upload.sh [COFFER_BIN ...]
# Env: ROUNDS (5), SIZE_MB (1024), DUR (10s, each small-upload run), DIR (a directory on
# the disk under test; default a new one under /tmp), SMALL_ROUNDS (2), SKIP_LARGE=1,
# SKIP_SMALL=1, SKIP_SQLITE=1 (PostgreSQL only), KEEP (1), BENCH_TOOL (the coffer binary
# whose `coffer bench` runs step 2; default the last one given), BENCH_TOOLS ("A B ...":
# several, each in turn after wrk, reported as bench0, bench1, ...). Prints the load
# average with each section.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5} size_mb=${SIZE_MB:-1024} dur=${DUR:-10s} small_rounds=${SMALL_ROUNDS:-2} keep=${KEEP:-1}
work=${DIR:-$(mktemp -d /tmp/coffer-bench-upload.XXXXXX)}
mkdir -p "$work"
secret=bench-upload-secret
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
  go build -o "$work/coffer" ./cmd/coffer
  bins=("$work/coffer")
fi
read -ra tools <<<"${BENCH_TOOLS:-${BENCH_TOOL:-${bins[-1]}}}" # run `coffer bench`
labels=(wrk bench) # small-upload clients, in the order each round runs them
[ ${#tools[@]} -eq 1 ] || labels=(wrk $(for i in "${!tools[@]}"; do echo "bench$i"; done))
tool_of() { local i=${1#bench}; echo "${tools[${i:-0}]}"; } # tool_of LABEL: its binary

. scripts/lib/loopback.sh # port, wait_port, median
# cpu_s PID: the process's user+system CPU seconds so far; user_s PID: user alone.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / hz }' "/proc/$1/stat"; }
user_s() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", $14 / hz }' "/proc/$1/stat"; }
now() { date +%s.%N; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# start NAME BIN [DATABASE_URL]: starts a server on a new data directory; sets port_NAME
# and pid_NAME.
start() {
  local name=$1 bin=$2 db=${3:-} port data
  port=$(port)
  nstarts=$((${nstarts:-0} + 1))
  data="$work/data-$name-$nstarts"
  mkdir -p "$data"
  "$bin" serve --listen "127.0.0.1:$port" --data-dir "$data" --admin-secret "$secret" \
    ${db:+--database-url "$db"} --log-level error --access-log off --image-worker /nonexistent \
    >"$work/log-$name" 2>&1 &
  pids+=($!)
  eval "port_$name=$port pid_$name=$!"
  wait_port "$port"
  curl -sS --fail-with-body -o /dev/null -H "x-hasura-admin-secret: $secret" -H 'Content-Type: application/json' \
    -d '{"id":"bench","maxUploadFileSize":1099511627776}' "http://127.0.0.1:$port/v1/buckets"
}

stop_all() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}

# upload_large NAME: prints "wall_s cpu_s user_s" of one curl upload of $work/big.bin;
# with KEEP=0 it deletes the new file (untimed).
upload_large() {
  local port pid t0 c0 u0 out id
  eval "port=\$port_$1 pid=\$pid_$1"
  c0=$(cpu_s "$pid") u0=$(user_s "$pid") t0=$(now)
  out=$(curl -sS --fail-with-body -H "x-hasura-admin-secret: $secret" -H 'Expect:' \
    -F bucket-id=bench -F "file[]=@$work/big.bin;type=application/octet-stream" "http://127.0.0.1:$port/v1/files")
  echo "$(echo "$(now) - $t0" | bc) $(echo "$(cpu_s "$pid") - $c0" | bc) $(echo "$(user_s "$pid") - $u0" | bc)"
  [ "$keep" = 1 ] && return
  id=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["processedFiles"][0]["id"])')
  curl -sS -o /dev/null -X DELETE -H "x-hasura-admin-secret: $secret" "http://127.0.0.1:$port/v1/files/$id"
}

large() {
  echo "== ${size_mb} MiB upload vs cp vs cp+sync, $rounds rounds alternating, KEEP=$keep; load before: $(loadavg)"
  local need=$(( (rounds * (3 + ${#bins[@]}) + 1) * size_mb ))
  if [ "$keep" = 1 ] && [ "$(df -m --output=avail "$work" | tail -1)" -lt $((need + 2048)) ]; then
    echo "bench-upload.sh: KEEP=1 needs ${need} MiB free under $work; set KEEP=0 or ROUNDS lower" >&2
    exit 1
  fi
  head -c "$((size_mb << 20))" /dev/urandom >"$work/big.bin"
  for i in "${!bins[@]}"; do start "s$i" "${bins[$i]}"; done
  : >"$work/large.txt"
  for r in $(seq "$rounds"); do
    t0=$(now); cp "$work/big.bin" "$work/copy-$r.bin"; echo "cp $(echo "$(now) - $t0" | bc) 0 0" >>"$work/large.txt"
    [ "$keep" = 1 ] || rm -f "$work/copy-$r.bin"; sync
    t0=$(now); cp "$work/big.bin" "$work/copy-sync-$r.bin"; sync; echo "cp+sync $(echo "$(now) - $t0" | bc) 0 0" >>"$work/large.txt"
    [ "$keep" = 1 ] || rm -f "$work/copy-sync-$r.bin"; sync
    t0=$(now); dd if="$work/big.bin" of="$work/copy-direct-$r.bin" bs=1M oflag=direct conv=fsync status=none
    echo "dd-direct $(echo "$(now) - $t0" | bc) 0 0" >>"$work/large.txt"
    [ "$keep" = 1 ] || rm -f "$work/copy-direct-$r.bin"; sync
    for i in "${!bins[@]}"; do
      echo "s$i $(upload_large "s$i")" >>"$work/large.txt"
      sync
    done
    echo "round $r: $(tail -n $((3 + ${#bins[@]})) "$work/large.txt" | tr '\n' ' ')"
  done
  local base
  base=$(awk '$1 == "cp+sync" { print $2 }' "$work/large.txt" | median)
  for name in cp cp+sync dd-direct $(for i in "${!bins[@]}"; do echo "s$i"; done); do
    local wall cpu user
    wall=$(awk -v n="$name" '$1 == n { print $2 }' "$work/large.txt" | median)
    cpu=$(awk -v n="$name" '$1 == n { print $3 }' "$work/large.txt" | median)
    user=$(awk -v n="$name" '$1 == n { print $4 }' "$work/large.txt" | median)
    printf "%-8s median wall %6.2f s (%.2fx cp+sync)  server CPU %5.2f s/GiB (user %.2f, system %.2f)\n" \
      "$name" "$wall" "$(echo "$wall / $base" | bc -l)" "$(echo "$cpu * 1024 / $size_mb" | bc -l)" \
      "$(echo "$user * 1024 / $size_mb" | bc -l)" "$(echo "($cpu - $user) * 1024 / $size_mb" | bc -l)"
  done
  for i in "${!bins[@]}"; do
    eval "pid=\$pid_s$i"
    echo "s$i ${bins[$i]}: peak RSS $(awk '/VmHWM/ { print $2 / 1024 " MB" }' "/proc/$pid/status")"
  done
  echo "load after: $(loadavg)"
  stop_all
  rm -rf "$work/big.bin" "$work"/copy-*.bin "$work"/data-s*
}

# wrk_lua writes the wrk script POSTing one 100 KB multipart file.
wrk_lua() {
  head -c 75000 /dev/urandom | base64 -w0 >"$work/small.bin" # 100,000 bytes
  cat >"$work/upload.lua" <<EOF
local f = io.open("$work/small.bin", "rb")
local data = f:read("*a")
f:close()
local b = "benchboundary7MA4YWxkTrZu0gW"
wrk.method = "POST"
wrk.headers["Content-Type"] = "multipart/form-data; boundary=" .. b
wrk.headers["x-hasura-admin-secret"] = "$secret"
wrk.body = "--" .. b .. "\r\nContent-Disposition: form-data; name=\"bucket-id\"\r\n\r\nbench\r\n" ..
  "--" .. b .. "\r\nContent-Disposition: form-data; name=\"file[]\"; filename=\"small.bin\"\r\n" ..
  "Content-Type: application/octet-stream\r\n\r\n" .. data .. "\r\n--" .. b .. "--\r\n"
local bad = 0
function response(status, headers, body) if status ~= 201 then bad = bad + 1 end end
done = function(summary, latency, requests)
  io.write(string.format("errors connect %d read %d write %d status %d timeout %d\n",
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.status, summary.errors.timeout))
end
EOF
}

# small_run NAME LABEL: one 100 KB c=50 run with wrk, or with tool N (label benchN, or
# bench for the only one); prints "req_s cpu_us_per_req
# client_cpu_us_per_req" (the load tool's own CPU: the two tools share the 2 cores
# with the server, so a hungrier client leaves the server less).
small_run() {
  local port pid c0 out rps n
  eval "port=\$port_$1 pid=\$pid_$1"
  c0=$(cpu_s "$pid")
  if [ "$2" = wrk ]; then
    out=$(/usr/bin/time -f 'client %U %S' wrk -t2 -c50 -d"$dur" --timeout 10s -s "$work/upload.lua" "http://127.0.0.1:$port/v1/files" 2>&1)
    echo "$out" | grep -E 'errors|Non-2xx' | sed "s/^/  $1 wrk: /" >&2
    rps=$(echo "$out" | awk '/Requests\/sec/ { print $2 }')
    n=$(echo "$out" | awk '/requests in/ { print $1 }')
  else
    # its own figures: req/s and the server's CPU during the run (the uploads are
    # deleted after it)
    "$(tool_of "$2")" bench --target "http://127.0.0.1:$port" --admin-secret "$secret" --scenario upload_small_file \
      --ramp 0s --hold "$dur" --workers 50 --server-pid "$pid" --quiet --json "$work/bench.json" >"$work/bench.out" 2>&1
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
n = max(r["requests"], 1)
print(r["rps"], r["server"]["cpu_seconds"] * 1e6 / n, r["client_cpu_seconds"] * 1e6 / n)
if r["errors"]: print("  bench errors:", r["errors_by_kind"], file=sys.stderr)' "$work/bench.json"
    return
  fi
  echo "$rps $(echo "($(cpu_s "$pid") - $c0) * 1000000 / $n" | bc -l)" \
    "$(echo "$out" | awk -v n="$n" '$1 == "client" { printf "%.1f", ($2 + $3) * 1000000 / n }')"
}

small() {
  local label=$1 db=${2:-}
  echo "== 100 KB uploads, c=50, $dur per run, $small_rounds rounds alternating ($label), each run on a new,"
  echo "   empty server; load before: $(loadavg)"
  : >"$work/small.txt"
  for r in $(seq "$small_rounds"); do
    for t in "${labels[@]}"; do
      for i in $(order "$r"); do
        settle "$db"
        start "s$i" "${bins[$i]}" "$(fresh_db "$db" "$i")"
        echo "s$i $t $(small_run "s$i" "$t")" | tee -a "$work/small.txt"
        stop_all
        rm -rf "$work"/data-s*
      done
    done
  done
  for i in "${!bins[@]}"; do
    for t in "${labels[@]}"; do
      printf "s%s %-6s median %7.0f uploads/s  server CPU %5.0f µs/upload  client CPU %5.0f µs/upload  (%s)\n" "$i" "$t" \
        "$(awk -v n="s$i" -v t="$t" '$1 == n && $2 == t { print $3 }' "$work/small.txt" | median)" \
        "$(awk -v n="s$i" -v t="$t" '$1 == n && $2 == t { print $4 }' "$work/small.txt" | median)" \
        "$(awk -v n="s$i" -v t="$t" '$1 == n && $2 == t { print $5 }' "$work/small.txt" | median)" \
        "${bins[$i]}$([ "$t" = wrk ] || echo ", tool $(tool_of "$t")")"
    done
  done
  echo "load after: $(loadavg)"
}

# order ROUND: the servers' indexes in the order round ROUND runs them: reversed every
# other round (A B, B A, A B, ...), so that no server always runs after the same one.
# With a fixed order, an A/A test (one binary twice, PostgreSQL, 3 rounds) gave the
# second server 1.39x the first's wrk uploads/s. From the second round on, the first
# ran right after the other's `coffer bench` run had deleted its ~10,000 uploads, the
# second after no deletion; probably why (mass deletes can slow the next file
# creations: ext4 passes over recently freed inodes when it allocates one, and `perf`
# showed that search as most of a create's CPU on this VM's disk). Now every run's
# data directory is also removed right after it, so every run follows a mass delete.
order() {
  if [ $(($1 % 2)) = 1 ]; then seq 0 $((${#bins[@]} - 1)); else seq $((${#bins[@]} - 1)) -1 0; fi
}

# settle [DATABASE_URL]: lets the previous run's writes reach the disk (and PostgreSQL
# write its dirty pages) before the next run starts.
settle() {
  sync
  [ -z "${1:-}" ] || psql -q "$1" -c CHECKPOINT
}

# fresh_db URL N: with a PostgreSQL URL, (re)creates database coffer_bench_upload_N
# there and prints its URL; without one, prints nothing (SQLite).
fresh_db() {
  [ -n "$1" ] || return 0
  psql -q "$1" -c "DROP DATABASE IF EXISTS coffer_bench_upload_$2" -c "CREATE DATABASE coffer_bench_upload_$2"
  python3 -c 'import sys,urllib.parse as u; p=u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/coffer_bench_upload_"+sys.argv[2])))' "$1" "$2"
}

# disk_floor: 100 KB durable puts per second at 50 threads, as fsblob does them.
disk_floor() {
  echo "== disk floor: 100 KB temp+fsync+rename+dir fsync, 50 threads, 5 s; load before: $(loadavg)"
  python3 - "$work/floor" <<'PY'
import os, sys, threading, time
root = sys.argv[1]
data = os.urandom(100000)
for d in range(256):
    os.makedirs(f"{root}/f/{d:02x}", exist_ok=True)
os.makedirs(f"{root}/tmp", exist_ok=True)
stop = time.time() + 5
counts = [0] * 50
def worker(i):
    n = 0
    while time.time() < stop:
        tmp = f"{root}/tmp/{i}-{n}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT, 0o640)
        os.write(fd, data); os.fsync(fd); os.close(fd)
        d = f"{root}/f/{(i * 7919 + n) % 256:02x}"
        os.rename(tmp, f"{d}/{i}-{n}")
        dfd = os.open(d, os.O_RDONLY); os.fsync(dfd); os.close(dfd)
        n += 1
    counts[i] = n
ts = [threading.Thread(target=worker, args=(i,)) for i in range(50)]
for t in ts: t.start()
for t in ts: t.join()
print(f"disk floor: {sum(counts) / 5:.0f} puts/s (2 fsyncs each)")
PY
  rm -rf "$work/floor"
}

[ "${SKIP_LARGE:-}" = 1 ] || large
if [ "${SKIP_SMALL:-}" != 1 ]; then
  wrk_lua
  disk_floor
  [ "${SKIP_SQLITE:-}" = 1 ] || small sqlite
  pg=${COFFER_TEST_DATABASE_URL:-${COFFER_TEST_PG_URL:-}}
  if [ -n "$pg" ]; then small postgres "$pg"; fi
fi
