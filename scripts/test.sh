#!/usr/bin/env bash
# Runs every test of coffer against real servers: installs and starts PostgreSQL and an
# S3-compatible server on 127.0.0.1 (scripts/test-services.sh), then vet, the unit,
# conformance and end-to-end suites, and a short run of every fuzz target.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=${GOFLAGS:--buildvcs=false}

if ! command -v go >/dev/null; then
  echo "test.sh: Go is required (https://go.dev/dl); Debian: apt-get install golang" >&2
  exit 1
fi

# ticking: says every 15 s that a long step is still running.
. scripts/lib/ticker.sh
t_start=$SECONDS
step() { echo "== $* ($((SECONDS - t_start)) s so far)"; }
step "starting PostgreSQL, versitygw (S3) and clamd on 127.0.0.1 (installed first if missing)"
# shellcheck source=scripts/test-services.sh
source scripts/test-services.sh
dpkg -s libvips-dev >/dev/null 2>&1 || apt_install "imaging/vips links it" libvips-dev
{ command -v node && command -v npm; } >/dev/null || apt_install "the Nhost JS SDK tests" nodejs npm
command -v protoc >/dev/null || apt_install "checks imagerpc's generated code" protobuf-compiler
command -v chromium >/dev/null || apt_install "the browser tests, headless" chromium
if ! command -v buf >/dev/null && [ ! -x "$(go env GOPATH)/bin/buf" ]; then
  step "building buf v1.75.0 from the Go module proxy (first run only, about 90 s)"
  ticking "the build of buf" go install github.com/bufbuild/buf/cmd/buf@v1.75.0 # proto: lint, breaking, generated-code check
fi

step "go vet"
ticking "go vet" go vet ./...
step "buf (proto: lint, breaking against the previous commit)"
scripts/buf.sh
step "go test ./... (unit, conformance, e2e against the built binary, hostile; the longest step, ~6 min)"
ticking "go test" go test -count=1 -timeout 20m ./...
step "go test -race (service layers, the RPC face, the serving layer)"
ticking "go test -race" go test -count=1 -race -timeout 20m ./service/... ./api/hasura/... ./blob/... ./meta/...
ticking "go test -race" go test -count=1 -race -timeout 10m ./rpcapi/... ./internal/httpserve/... # the RPC face and the serving layer it shares
step "fuzz (every target, ${FUZZTIME:-5s} each, ${FUZZJOBS:-2} at once)"
scripts/fuzz.sh "${FUZZTIME:-5s}" "${FUZZJOBS:-2}"
echo "== all tests passed ($((SECONDS - t_start)) s)"
