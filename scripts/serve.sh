#!/usr/bin/env bash
# Runs `coffer serve` from source on the embedded default (SQLite + local disk in
# ./data, 127.0.0.1:8000); flags and COFFER_* variables pass through. It builds coffer
# and its image worker coffer-imager into ./bin (scripts/build.sh; COFFER_BIN_DIR
# changes the directory). The worker needs libvips: it is installed from apt when
# missing and this user can install packages; otherwise only coffer is built and image
# transformations answer 501. Each step is announced on stderr: the first run takes
# a few minutes (apt, then the cgo build of the worker) and would otherwise be silent.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${COFFER_BIN_DIR:-./bin}
say() { echo "serve.sh: $*" >&2; }
has_vips() { pkg-config --exists vips 2>/dev/null; }
if ! has_vips && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  . scripts/lib/apt.sh
  apt_install "image transformations; a minute or two" libvips-dev pkg-config
fi
say "building coffer and coffer-imager into $bin (the first build takes a few minutes; later ones seconds)..."
t0=$SECONDS
./scripts/build.sh "$bin"
say "built in $((SECONDS - t0)) s; starting $bin/coffer serve"
exec "$bin/coffer" serve "$@"
