#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for the store's conformance tests and
# benchmarks, and prints the DSN to use on the last line of stdout:
#
#   eval "$(hack/postgres.sh | tail -n1)"   # exports UPTIME_TEST_POSTGRES_DSN
#   go test ./internal/store/postgres/...
#
# Idempotent: when a server already listens on the port it only makes sure the
# database exists. Otherwise it installs PostgreSQL from the Debian packages when
# no server binaries are found, initialises a cluster in the data directory
# (owned by a non-root user, because initdb and postgres refuse to run as root),
# and starts it on 127.0.0.1:PORT with its unix socket in the data directory.
#
# Environment:
#   PG_PORT      TCP port (default 55432)
#   PG_DATA      data directory (default ${XDG_CACHE_HOME:-$HOME/.cache}/uptime-operator/pg)
#   PG_DB        database to create (default uptime_test)
#   PG_USER      database superuser (default uptime)
#   PG_PASSWORD  its password (default uptime)
#   PG_OS_USER   OS user that runs the server when invoked as root (default postgres)
#
# Progress goes to stderr.
set -euo pipefail

PORT="${PG_PORT:-55432}"
DATA="${PG_DATA:-${XDG_CACHE_HOME:-$HOME/.cache}/uptime-operator/pg}"
DB="${PG_DB:-uptime_test}"
DBUSER="${PG_USER:-uptime}"
DBPASS="${PG_PASSWORD:-uptime}"
OSUSER="${PG_OS_USER:-postgres}"

say() { echo "postgres.sh: $*" >&2; }

dsn() { echo "export UPTIME_TEST_POSTGRES_DSN='postgres://${DBUSER}:${DBPASS}@127.0.0.1:${PORT}/${DB}?sslmode=disable'"; }

# find_bindir prints the newest /usr/lib/postgresql/<version>/bin that has initdb.
find_bindir() {
  local d best=""
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V); do
    [[ -x "$d/initdb" && -x "$d/pg_ctl" && -x "$d/postgres" ]] && best="$d"
  done
  if [[ -z "$best" ]] && command -v pg_config >/dev/null 2>&1; then
    d="$(pg_config --bindir)"
    [[ -x "$d/initdb" ]] && best="$d"
  fi
  echo "$best"
}

listening() {
  if command -v pg_isready >/dev/null 2>&1; then
    pg_isready -q -h 127.0.0.1 -p "$PORT" >/dev/null 2>&1 && return 0
    return 1
  fi
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null
}

# as_owner runs a command as the data directory's owner (OSUSER when root).
as_owner() {
  if [[ "$(id -u)" == "0" ]]; then
    if command -v runuser >/dev/null 2>&1; then
      runuser -u "$OSUSER" -- "$@"
    else
      su -s /bin/sh "$OSUSER" -c "$(printf '%q ' "$@")"
    fi
  else
    "$@"
  fi
}

# psql_admin runs SQL as the cluster superuser over the unix socket.
psql_admin() {
  as_owner "$BINDIR/psql" -v ON_ERROR_STOP=1 -q -h "$DATA" -p "$PORT" -d postgres "$@"
}

ensure_db() {
  # Over TCP with the test user: works whether or not we started the server.
  if PGPASSWORD="$DBPASS" "${BINDIR:+$BINDIR/}psql" -q -h 127.0.0.1 -p "$PORT" -U "$DBUSER" -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname='${DB}'" 2>/dev/null | grep -q 1; then
    return 0
  fi
  if PGPASSWORD="$DBPASS" "${BINDIR:+$BINDIR/}psql" -q -h 127.0.0.1 -p "$PORT" -U "$DBUSER" -d postgres \
      -c "CREATE DATABASE \"${DB}\"" >/dev/null 2>&1; then
    say "created database $DB"
    return 0
  fi
  if [[ -d "$DATA" && -S "$DATA/.s.PGSQL.$PORT" ]]; then
    psql_admin -tAc "SELECT 1 FROM pg_database WHERE datname='${DB}'" | grep -q 1 ||
      psql_admin -c "CREATE DATABASE \"${DB}\" OWNER \"${DBUSER}\""
    return 0
  fi
  say "server on port $PORT is not ours and database $DB could not be created as $DBUSER"
  return 1
}

BINDIR="$(find_bindir)"

if listening; then
  say "a server already listens on 127.0.0.1:$PORT"
  ensure_db
  dsn
  exit 0
fi

if [[ -z "$BINDIR" ]]; then
  say "PostgreSQL server binaries not found; installing the Debian package"
  if [[ "$(id -u)" != "0" ]]; then
    SUDO=sudo
  else
    SUDO=
  fi
  $SUDO apt-get install -y postgresql >&2 || { $SUDO apt-get update >&2 && $SUDO apt-get install -y postgresql >&2; }
  BINDIR="$(find_bindir)"
  [[ -n "$BINDIR" ]] || { say "no initdb found after installing postgresql"; exit 1; }
fi
say "using $BINDIR"

if [[ "$(id -u)" == "0" ]]; then
  getent passwd "$OSUSER" >/dev/null || { say "user $OSUSER does not exist; set PG_OS_USER to a non-root user"; exit 1; }
fi

if [[ ! -s "$DATA/PG_VERSION" ]]; then
  say "initialising a cluster in $DATA"
  mkdir -p "$DATA"
  if [[ "$(id -u)" == "0" ]]; then
    chown "$OSUSER" "$DATA"
    # The server user must be able to reach the directory.
    p="$(dirname "$DATA")"
    while [[ "$p" != "/" ]]; do chmod o+x "$p" 2>/dev/null || true; p="$(dirname "$p")"; done
  fi
  chmod 700 "$DATA"
  pwfile="$(mktemp)"
  echo "$DBPASS" >"$pwfile"
  [[ "$(id -u)" == "0" ]] && chown "$OSUSER" "$pwfile"
  as_owner "$BINDIR/initdb" -D "$DATA" -U "$DBUSER" --pwfile="$pwfile" -A scram-sha-256 \
    --auth-local=trust -E UTF8 --locale=C.UTF-8 >&2 ||
    as_owner "$BINDIR/initdb" -D "$DATA" -U "$DBUSER" --pwfile="$pwfile" -A scram-sha-256 \
      --auth-local=trust -E UTF8 --locale=C >&2
  rm -f "$pwfile"
  cat >>"$DATA/postgresql.conf" <<EOF
# uptime-operator test cluster
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = '$DATA'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 128MB
EOF
fi

say "starting the server on 127.0.0.1:$PORT"
as_owner "$BINDIR/pg_ctl" -D "$DATA" -l "$DATA/server.log" -w -t 60 start >&2

psql_admin -U "$DBUSER" -tAc "SELECT 1 FROM pg_database WHERE datname='${DB}'" | grep -q 1 ||
  { psql_admin -U "$DBUSER" -c "CREATE DATABASE \"${DB}\""; say "created database $DB"; }

say "ready"
dsn
