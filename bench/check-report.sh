#!/usr/bin/env bash
# Opens an HTML report of coffer bench in headless Chromium, saves a screenshot and
# fails when the page logged a console error or an uncaught exception.
#   bench/check-report.sh REPORT.html [SCREENSHOT.png]   (needs: apt-get install chromium)
set -euo pipefail
report=$(realpath "$1") shot=${2:-${1%.html}.png}
profile=$(mktemp -d) log=$(mktemp)
trap 'rm -rf "$profile" "$log"' EXIT
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --enable-logging=stderr --v=0 \
  --screenshot="$shot" --window-size=1400,2000 "file://$report" >"$log" 2>&1
if grep -E 'Uncaught|ERROR:CONSOLE' "$log"; then
  echo "check-report: console errors in $report" >&2
  exit 1
fi
[ -s "$shot" ] || { echo "check-report: no screenshot" >&2; exit 1; }
echo "check-report: $report rendered without console errors; screenshot $shot"
