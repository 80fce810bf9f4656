#!/usr/bin/env bash
# Runs `coffer serve` from source on the embedded default (SQLite + local disk in
# ./data, 127.0.0.1:8000); flags and COFFER_* variables pass through. Image
# transformations need libvips: it is installed from apt when missing and this user
# can install packages; otherwise coffer is built without them (-tags novips, transform
# requests answer 501) rather than not at all.
set -euo pipefail
cd "$(dirname "$0")/.."
has_vips() { pkg-config --exists vips 2>/dev/null; }
if ! has_vips && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  echo "serve.sh: installing libvips-dev (apt) for image transformations" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libvips-dev pkg-config >/dev/null
fi
if has_vips; then
  exec go run ./cmd/coffer serve "$@"
fi
echo "serve.sh: libvips not found (apt-get install libvips-dev): building without image transformations" >&2
CGO_ENABLED=0 exec go run -tags novips ./cmd/coffer serve "$@"
