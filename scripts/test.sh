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

# shellcheck source=scripts/test-services.sh
source scripts/test-services.sh
dpkg -s libvips-dev >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libvips-dev >/dev/null; } # imaging/vips (cgo)
{ command -v node && command -v npm; } >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; } # internal/e2e/nhostjs (Nhost JS SDKs)
command -v protoc >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq protobuf-compiler >/dev/null; } # imaging/remote/imagerpc: checks the generated code
command -v buf >/dev/null || [ -x "$(go env GOPATH)/bin/buf" ] || go install github.com/bufbuild/buf/cmd/buf@v1.75.0 # proto: lint, breaking, generated-code check
command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } # internal/e2e browser test (headless Chromium)

echo "== go vet"
go vet ./...
echo "== buf (proto: lint, breaking against the previous commit)"
scripts/buf.sh
echo "== go test"
go test -count=1 -timeout 20m ./...
echo "== go test -race (service layers)"
go test -count=1 -race -timeout 20m ./service/... ./api/hasura/... ./blob/... ./meta/...
go test -count=1 -race -timeout 10m ./rpcapi/... ./internal/httpserve/... # the RPC face and the serving layer it shares
echo "== fuzz (short)"
scripts/fuzz.sh "${FUZZTIME:-5s}"
echo "== all tests passed"
