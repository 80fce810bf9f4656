#!/usr/bin/env bash
# Can one user's image transformations stall another's? Two measurements, ROUNDS
# times each, medians printed:
#  1. fairness: user B (anonymous, keyed by client IP) times cheap transforms (w=9
#     of a 16x16 JPEG, a new q each so the variant cache misses) idle, then while
#     user A (the admin key) keeps 20 concurrent expensive transforms going (a
#     7000x7000 JPEG to w=2000&b=20, about 2 s of CPU each, just within the default
#     --image-max-cost, a new b each). Prints B's median and p99, and the loaded/idle
#     p99 ratio (target <= 2).
#  2. the issue's reproducer, on a server started with --image-max-cost raised so the
#     expensive requests really run: four requests for the 7000x7000 JPEG with
#     w=5000&h=5000&fit=fill&b=90..93, each abandoned by its client after 1 s, then
#     one cheap transform; prints its time against the idle median (target <= 2x).
#   scripts/bench-transform-fair.sh [ROUNDS=3] [SAMPLES=300]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3} samples=${2:-300}
export GOFLAGS=${GOFLAGS:--buildvcs=false}
work=$(mktemp -d /tmp/coffer-transform-fair.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

./scripts/build.sh "$work"
[ -x "$work/coffer-imager" ] || { echo "bench-transform-fair.sh: needs libvips-dev for coffer-imager" >&2; exit 1; }
vips gaussnoise "$work/big.v" 7000 7000 --mean 128 --sigma 40 && vips copy "$work/big.v" "$work/big.jpg[Q=85]" && rm "$work/big.v"
vips gaussnoise "$work/tiny.v" 16 16 --mean 128 --sigma 40 && vips copy "$work/tiny.v" "$work/tiny.jpg" && rm "$work/tiny.v"

# start EXTRA-FLAGS...: starts a server, sets C, uploads both images (ids in big, tiny).
start() {
  local p; p=$(port)
  "$work/coffer" serve --listen "127.0.0.1:$p" --data-dir "$work/data-$p" --admin-secret s --log-level warn \
    --variant-cache-size 0 --variants-per-file 0 "$@" >"$work/coffer-$p.log" 2>&1 &
  pids+=($!)
  C=http://127.0.0.1:$p
  for _ in $(seq 100); do curl -sf "$C/healthz" >/dev/null && break; sleep 0.1; done
  curl -sf -H 'x-hasura-admin-secret: s' -d '{"id":"pub","public":true}' "$C/v1/buckets" >/dev/null
  big=$(up "$work/big.jpg") tiny=$(up "$work/tiny.jpg")
  cheap 3 >/dev/null # starts the image worker: its start is not a transformation's time
}
up() { curl -sf -H 'x-hasura-admin-secret: s' -F bucket-id=pub -F "file[]=@$1" "$C/v1/files" | jq -r '.processedFiles[0].id'; }
q=0
# cheap N: B's cheap transforms, one at a time; prints their times in ms, one a line.
cheap() {
  for _ in $(seq "$1"); do
    q=$(( q % 100 + 1 ))
    curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "$C/v1/files/$tiny?w=9&q=$q" |
      awk '$1!=200{print "cheap transform answered " $1 > "/dev/stderr"} {printf "%.1f\n", $2*1000}'
  done
}
stats() { python3 -c 'import statistics,sys; v=sorted(float(x) for x in sys.stdin); print(f"{statistics.median(v):.1f} {v[min(len(v)-1, int(len(v)*0.99))]:.1f}")'; }
# loadA: 20 concurrent loops of A's expensive transforms until $work/stop exists;
# counts answers by status in $work/a-status.
loadA() {
  apids=()
  for i in $(seq 20); do
    ( n=0; while [ ! -e "$work/stop" ]; do
        n=$((n + 1))
        curl -s -o /dev/null -w '%{http_code}\n' -H 'x-hasura-admin-secret: s' "$C/v1/files/$big?w=2000&b=$((10 + (i * 37 + n) % 10)).$((i + n * 20))" >>"$work/a-status"
        if [ "$(tail -n 1 "$work/a-status")" = 429 ]; then sleep 1; fi # as its Retry-After: 1 says
      done ) &
    apids+=($!)
  done
}

start
results=$work/results.txt
for r in $(seq "$rounds"); do
  idle=$(cheap "$samples" | stats)
  rm -f "$work/stop" "$work/a-status"; loadA; sleep 3
  loaded=$(cheap "$samples" | stats)
  echo "  while loaded: $(top -b -n 1 -w 200 | awk '$12 ~ /coffer|curl/ {c[$12]+=$9} END {for (k in c) printf "%s %.0f%%  ", k, c[k]}')"
  touch "$work/stop"; wait "${apids[@]}" || true
  echo "fair $idle $loaded" | tee -a "$results"
  echo "  A's answers: $(sort "$work/a-status" | uniq -c | awk '{printf "%s x%s  ", $2, $1}')"
done

start --image-max-cost 1000000000000
for r in $(seq "$rounds"); do
  idle=$(cheap "$samples" | stats)
  cpids=()
  for b in 90 91 92 93; do
    curl -s -o /dev/null --max-time 1 "$C/v1/files/$big?w=5000&h=5000&fit=fill&b=$b.$r" &
    cpids+=($!)
  done
  wait "${cpids[@]}" || true
  after=$(cheap 1)
  echo "abandon $idle $after" | tee -a "$results"
done

python3 - "$results" <<'PY'
import statistics, sys
fair, ab = [], []
for line in open(sys.argv[1]):
    f = line.split()
    (fair if f[0] == "fair" else ab).append([float(x) for x in f[1:]])
m = lambda rows, i: statistics.median(r[i] for r in rows)
print(f"B's cheap transform (median of {len(fair)} rounds): idle median {m(fair,0):.1f} ms p99 {m(fair,1):.1f} ms; "
      f"with A's 20 concurrent expensive ones: median {m(fair,2):.1f} ms p99 {m(fair,3):.1f} ms; "
      f"p99 loaded/idle {m(fair,3)/m(fair,1):.2f}x (target <= 2)")
print(f"cheap transform after four abandoned expensive ones (median of {len(ab)} rounds): {m(ab,2):.1f} ms, "
      f"idle median {m(ab,0):.1f} ms: {m(ab,2)/m(ab,0):.2f}x (target <= 2)")
PY
