#!/usr/bin/env bash
# Runs `coffer serve` from source on the embedded default (SQLite + local disk in
# ./data, 127.0.0.1:8000); flags and COFFER_* variables pass through. It builds coffer
# and its image worker coffer-imager into ./bin (scripts/build.sh). The worker needs
# libvips: it is installed from apt when missing and this user can install packages;
# otherwise only coffer is built and image transformations answer 501.
set -euo pipefail
cd "$(dirname "$0")/.."
has_vips() { pkg-config --exists vips 2>/dev/null; }
if ! has_vips && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "serve.sh: installing libvips-dev (apt) for image transformations" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libvips-dev pkg-config >/dev/null
fi
./scripts/build.sh ./bin
exec ./bin/coffer serve "$@"
