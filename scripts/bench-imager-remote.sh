#!/usr/bin/env bash
# Image transformations through the local coffer-imager child (A) against one
# coffer-imager --listen on the same machine reached over loopback TCP (B): the bench
# tool's download_image_manipulated scenario (the 5.3 MB 4000x3000 JPEG -> w=800&b=2,
# 10 workers), variant caches off so every request transforms. Both servers run
# throughout with --image-workers 2 (the worker, child or remote, runs 2 at once);
# rounds alternate A B, B A, A B ... and each run is `coffer bench` for DURATION. Per run:
# req/s, p50, and CPU per request of the server plus its image worker (utime+stime
# from /proc, so less sensitive to other load than req/s). Prints medians, B/A and
# the load average before and after.
#   scripts/bench-imager-remote.sh [ROUNDS] [DURATION]      (default 5 rounds of 10s)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/loopback.sh
rounds=${1:-5} dur=${2:-10s}
bench_workdir coffer-imager-remote
bin=$work/bin
scripts/build.sh "$bin" >/dev/null
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)  cores: $(nproc)"

secret=bench-imager-secret
common=(--admin-secret s --log-level warn --variant-cache-size 0 --variants-per-file 0 --image-workers 2 --image-worker-idle 0
  --image-user-workers 2 --image-queue 64 --image-user-queue 64) # the bench is one user (admin): no per-user cap
pa=$(port) pb=$(port) pw=$(port)
"$bin/coffer" serve --listen "127.0.0.1:$pa" --data-dir "$work/a" "${common[@]}" >"$work/a.log" 2>&1 &
pid_a=$!; pids+=("$pid_a")
# MALLOC_ARENA_MAX=2: what coffer serve sets for its child, so both run alike.
MALLOC_ARENA_MAX=2 COFFER_IMAGER_SECRET=$secret "$bin/coffer-imager" --listen "127.0.0.1:$pw" --workers 2 2>"$work/w.log" &
pid_w=$!; pids+=("$pid_w")
wait_port "$pw"
COFFER_IMAGE_WORKERS_SECRET=$secret "$bin/coffer" serve --listen "127.0.0.1:$pb" --data-dir "$work/b" "${common[@]}" \
  --image-workers-remote "http://127.0.0.1:$pw" >"$work/b.log" 2>&1 &
pid_b=$!; pids+=("$pid_b")
wait_port "$pa"; wait_port "$pb"

# cpu_ticks PID...: utime+stime of the processes and their children, in clock ticks.
cpu_ticks() {
  local t=0 p k
  for p in "$@"; do
    for k in $p $(cat /proc/"$p"/task/*/children 2>/dev/null); do
      t=$((t + $(awk '{print $14 + $15}' "/proc/$k/stat" 2>/dev/null || echo 0)))
    done
  done
  echo "$t"
}

run() { # label url pids...
  local label=$1 url=$2; shift 2
  local before after
  before=$(cpu_ticks "$@")
  "$bin/coffer" bench --target "$url" --admin-secret s --scenario download_image_manipulated --ramp 1s --hold "$dur" \
    --graceful-stop 5s --quiet --json "$work/r.json" >/dev/null
  after=$(cpu_ticks "$@")
  python3 - "$work/r.json" "$label" "$before" "$after" "$(getconf CLK_TCK)" >>"$work/runs.txt" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
ticks = (int(sys.argv[4]) - int(sys.argv[3])) / int(sys.argv[5])
bad = r["requests"] - r["status"].get("200", 0)
print(sys.argv[2], r["rps"], r["latency"]["p50_ms"],
      ticks * 1000 / max(r["requests"], 1), r["requests"], bad)
PY
}
for i in $(seq "$rounds"); do
  if ((i % 2)); then
    run A "http://127.0.0.1:$pa" "$pid_a"
    run B "http://127.0.0.1:$pb" "$pid_b" "$pid_w"
  else
    run B "http://127.0.0.1:$pb" "$pid_b" "$pid_w"
    run A "http://127.0.0.1:$pa" "$pid_a"
  fi
  echo "round $i: $(tail -2 "$work/runs.txt" | tr '\n' ' ')" >&2
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$work/runs.txt" <<'PY'
import statistics as st, sys
v = {}
for line in open(sys.argv[1]):
    label, *f = line.split()
    for k, x in zip(["req/s", "p50 ms", "CPU ms/req", "requests", "non-200"], f):
        v.setdefault((label, k), []).append(float(x))
print("download_image_manipulated (w=800&b=2, 10 workers); A = local child, B = one remote worker over loopback TCP")
for k in ["req/s", "p50 ms", "CPU ms/req", "requests", "non-200"]:
    a, b = v[("A", k)], v[("B", k)]
    ma, mb = st.median(a), st.median(b)
    print(f"{k:11} median A {ma:9.2f}  B {mb:9.2f}  B/A {mb / ma if ma else float('nan'):5.2f}   A {a}  B {b}")
PY
