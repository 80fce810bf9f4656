#!/usr/bin/env bash
# Idle RSS of `coffer serve` right after start: VmRSS (and its anonymous and
# file-backed parts) from /proc 1 s after /healthz answers, for each given coffer
# binary in turn, ROUNDS times alternately; prints every run and the medians.
#   scripts/idle-rss.sh [ROUNDS=5] BINARY...
# Default binary: ./bin/coffer built by scripts/build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
shift || true
bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then ./scripts/build.sh ./bin; bins=(./bin/coffer); fi
work=$(mktemp -d /tmp/coffer-idle-rss.XXXXXX)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
for r in $(seq "$rounds"); do
  for b in "${bins[@]}"; do
    p=$(port)
    rm -rf "$work/data"
    "$b" serve --listen "127.0.0.1:$p" --data-dir "$work/data" --admin-secret s --log-level warn >"$work/log" 2>&1 &
    pid=$!
    for _ in $(seq 300); do curl -sf "http://127.0.0.1:$p/healthz" >/dev/null && break; sleep 0.05; done
    sleep 1
    awk -v b="$b" '/^(VmRSS|RssAnon|RssFile):/{v[$1]=$2} END{printf "%s VmRSS %d RssAnon %d RssFile %d kB\n", b, v["VmRSS:"], v["RssAnon:"], v["RssFile:"]}' \
      "/proc/$pid/status" | tee -a "$work/runs.txt"
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  done
done
python3 - "$work/runs.txt" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    rows.setdefault(f[0], []).append((int(f[2]), int(f[4]), int(f[6])))
for b, v in rows.items():
    med = [statistics.median(x[i] for x in v) / 1024 for i in range(3)]
    print(f"median of {len(v)}: {b}: VmRSS {med[0]:.1f} MB (anonymous {med[1]:.1f} MB, file-backed {med[2]:.1f} MB)")
PY
