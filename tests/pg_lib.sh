# A real PostgreSQL 15 server for integration tests (sourced after lib.sh).
# pg_start creates a cluster in a fresh temporary directory, owned by an
# unprivileged user (initdb refuses root; we use `nobody` through runuser
# when running as root), starts it listening only on a private unix socket
# directory (listen_addresses = ''), and sets:
#   KOPE_PG_URL   postgresql:///kope?host=SOCKDIR&user=kope  (a store URL)
#   KOPE_PG_SOCK  the socket directory
#   PG_BIN        the server binaries
# pg_psql SQL runs one statement with psql and prints unaligned tuples.
# The server is stopped and the directory removed on exit (trap).
# A test calls pg_require first: it exits 77 (skip) with a message only
# when the server binaries are missing.

PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
PG_BASE=""

pg_require() {
  local b
  for b in initdb pg_ctl postgres psql; do
    if [ ! -x "$PG_BIN/$b" ] && [ ! -x "/usr/bin/$b" ]; then
      echo "SKIP: PostgreSQL 15 server binaries not found in $PG_BIN (install postgresql-15)"
      exit 77
    fi
  done
}

# Run a server binary as the cluster's owner.
pg_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u nobody -- "$@"
  else
    "$@"
  fi
}

pg_stop() {
  if [ -n "$PG_BASE" ] && [ -d "$PG_BASE/data" ]; then
    pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_BASE/data" -m immediate -w stop >/dev/null 2>&1
  fi
  [ -n "$PG_BASE" ] && rm -rf "$PG_BASE"
  PG_BASE=""
}

pg_start() {
  pg_require
  PG_BASE=$(mktemp -d /tmp/kope-pg.XXXXXX)
  chmod 755 "$PG_BASE"
  mkdir -p "$PG_BASE/data" "$PG_BASE/s"
  if [ "$(id -u)" -eq 0 ]; then chown -R nobody "$PG_BASE"; fi
  trap pg_stop EXIT
  if ! pg_as_owner "$PG_BIN/initdb" -D "$PG_BASE/data" -U kope --auth=trust -E UTF8 \
       --locale=C.UTF-8 >"$PG_BASE/initdb.log" 2>&1; then
    echo "pg_lib: initdb failed:"; tail -5 "$PG_BASE/initdb.log"; return 1
  fi
  cat >>"$PG_BASE/data/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$PG_BASE/s'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 60
shared_buffers = 64MB
EOF
  if ! pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_BASE/data" -l "$PG_BASE/server.log" -w -t 60 \
       start >/dev/null 2>&1; then
    echo "pg_lib: the server did not start:"; tail -5 "$PG_BASE/server.log"; return 1
  fi
  KOPE_PG_SOCK="$PG_BASE/s"
  "$PG_BIN/psql" -h "$KOPE_PG_SOCK" -U kope -d postgres -qAt -c "CREATE DATABASE kope" >/dev/null
  KOPE_PG_URL="postgresql:///kope?host=$KOPE_PG_SOCK&user=kope"
  export KOPE_PG_URL KOPE_PG_SOCK
}

# pg_createdb NAME: another database on the same server; prints its URL.
pg_createdb() {
  "$PG_BIN/psql" -h "$KOPE_PG_SOCK" -U kope -d postgres -qAt -c "CREATE DATABASE $1" >/dev/null
  echo "postgresql:///$1?host=$KOPE_PG_SOCK&user=kope"
}

pg_psql() {
  "$PG_BIN/psql" -h "$KOPE_PG_SOCK" -U kope -d "${PG_DB:-kope}" -qAt -v ON_ERROR_STOP=1 -c "$1"
}
