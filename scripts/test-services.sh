#!/usr/bin/env bash
# Installs (if missing) and starts the real servers the test suites use, on 127.0.0.1:
#   - PostgreSQL (Debian package), a private throwaway cluster
#   - versitygw, an S3-compatible server built from the Go module proxy and cached
#   - clamd (Debian's clamav-daemon) with a one-line signature database (EICAR), no
#     freshclam and no download: it starts in well under a second
# Source it: it exports COFFER_TEST_* variables and registers a cleanup trap.
# Nothing here listens on anything but 127.0.0.1.

COFFER_TOOLS=${COFFER_TOOLS:-$HOME/.cache/coffer-bin}
VERSITYGW_VERSION=${VERSITYGW_VERSION:-v1.8.0}
svc_dir=$(mktemp -d /tmp/coffer-test-services.XXXXXX)
chmod 755 "$svc_dir"

# port and wait_port; a server slow to listen is reported and the tests that need it
# then fail on their own (as before: wait_port's failure does not stop the script).
. "$(dirname "${BASH_SOURCE[0]}")/lib/loopback.sh"
# apt_install: announced, waits for another apt run's lock.
. "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"

as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

ensure_postgres() {
  if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    apt_install "the PostgreSQL suites" postgresql
  fi
  pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
}

start_postgres() {
  ensure_postgres
  local port; port=$(port)
  local run="$svc_dir/pg"
  pg_data="$run/data"
  mkdir -p "$run" && { [ "$(id -u)" != 0 ] || chown postgres:postgres "$run"; }
  as_postgres "$pg_bin/initdb" -D "$pg_data" -U postgres --auth=trust -E UTF8 >"$svc_dir/initdb.log" 2>&1 \
    || { cat "$svc_dir/initdb.log"; return 1; }
  as_postgres "$pg_bin/pg_ctl" -D "$pg_data" -l "$run/pg.log" -w -o \
    "-p $port -c listen_addresses=127.0.0.1 -k $run -c fsync=off -c max_connections=300" start >/dev/null \
    || { cat "$run/pg.log"; return 1; }
  export COFFER_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
  echo "test-services: PostgreSQL $("$pg_bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
}

ensure_versitygw() {
  versitygw="$COFFER_TOOLS/versitygw"
  if [ ! -x "$versitygw" ]; then
    echo "test-services: building versitygw $VERSITYGW_VERSION (first run only, a few minutes)"
    mkdir -p "$COFFER_TOOLS"
    (cd /tmp && GOBIN="$COFFER_TOOLS" GOFLAGS= go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION")
  fi
}

start_s3() {
  ensure_versitygw
  local port; port=$(port)
  mkdir -p "$svc_dir/s3"
  ROOT_ACCESS_KEY=coffertest ROOT_SECRET_KEY=coffertestsecret \
    "$versitygw" --port "127.0.0.1:$port" posix "$svc_dir/s3" >"$svc_dir/s3.log" 2>&1 &
  s3_pid=$!
  wait_port "$port" || true
  export COFFER_TEST_S3_ENDPOINT="http://127.0.0.1:$port"
  export COFFER_TEST_S3_ACCESS_KEY=coffertest COFFER_TEST_S3_SECRET_KEY=coffertestsecret
  echo "test-services: versitygw (S3) on 127.0.0.1:$port"
}

ensure_clamd() {
  if [ ! -x /usr/sbin/clamd ]; then
    apt_install "the virus-scanning tests" clamav-daemon
  fi
}

start_clamd() {
  ensure_clamd
  local port; port=$(port)
  local run="$svc_dir/clamd"
  mkdir -p "$run/db"
  # The EICAR test file's MD5:size:name; clamd reports it as Eicar-Test-Signature.UNOFFICIAL.
  echo '44d88612fea8a8f36de82e1278abb02f:68:Eicar-Test-Signature' >"$run/db/test.hdb"
  # StreamMaxLength/MaxFileSize/MaxScanSize 2000M: a 1 GiB upload is read and scanned
  # whole (clamd cannot scan files over 2 GiB - 1).
  printf '%s\n' "DatabaseDirectory $run/db" "TCPAddr 127.0.0.1" "TCPSocket $port" "Foreground yes" \
    "StreamMaxLength 2000M" "MaxFileSize 2000M" "MaxScanSize 2000M" \
    "TemporaryDirectory $run" "LogFile $run/clamd.log" >"$run/clamd.conf"
  /usr/sbin/clamd --config-file="$run/clamd.conf" >"$svc_dir/clamd.out" 2>&1 &
  clamd_pid=$!
  wait_port "$port" || true
  export COFFER_TEST_CLAMD_ADDR="127.0.0.1:$port"
  echo "test-services: clamd $(/usr/sbin/clamd --version | awk '{print $2}' | cut -d/ -f1) on 127.0.0.1:$port"
}

stop_services() {
  [ -n "${s3_pid:-}" ] && kill "$s3_pid" 2>/dev/null
  [ -n "${clamd_pid:-}" ] && kill "$clamd_pid" 2>/dev/null && wait "$clamd_pid" 2>/dev/null
  [ -n "${pg_data:-}" ] && as_postgres "$pg_bin/pg_ctl" -D "$pg_data" -m immediate stop >/dev/null 2>&1
  rm -rf "$svc_dir"
}

trap stop_services EXIT
unset AWS_CA_BUNDLE
start_postgres
start_s3
start_clamd
export COFFER_TEST_REQUIRE_SERVICES=1
