#!/usr/bin/env bash
# Builds the server and, when libvips is installed, its image worker into DIR
# (default ./bin): coffer (pure Go, CGO_ENABLED=0: it never links libvips) and
# coffer-imager (cgo, libvips). coffer finds coffer-imager next to itself. Without
# libvips only coffer is built, and it answers image transformations with 501.
#   scripts/build.sh [DIR=./bin]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-./bin}
mkdir -p "$dir"
export GOFLAGS=${GOFLAGS:--buildvcs=false}
# ticking: says every 15 s that a build is still running.
. "$(dirname "$0")/lib/ticker.sh"
echo "build.sh: go build coffer (pure Go) -> $dir/coffer" >&2
CGO_ENABLED=0 ticking "the build of coffer" go build -o "$dir/coffer" ./cmd/coffer
if pkg-config --exists vips 2>/dev/null; then
  echo "build.sh: go build coffer-imager (cgo, links libvips; slow the first time) -> $dir/coffer-imager" >&2
  ticking "the build of coffer-imager" go build -o "$dir/coffer-imager" ./cmd/coffer-imager
else
  rm -f "$dir/coffer-imager"
  echo "build.sh: libvips not found (apt-get install libvips-dev): built coffer without its image worker; transformations answer 501" >&2
fi
