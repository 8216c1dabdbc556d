#!/usr/bin/env bash
# A private PostgreSQL server for Amber's team-memory tests and benchmarks, from the
# machine's PostgreSQL binaries (Debian's postgresql-15 here): a cluster in a temp
# directory, listening on 127.0.0.1 only, trust authentication (tests only: never
# expose it). Idempotent: `start` on a running cluster just prints its URL.
#
#   scripts/pg.sh start   # create the cluster if needed, start it, print the admin URL
#   scripts/pg.sh url     # print the admin URL
#   scripts/pg.sh stop    # stop it (fast shutdown)
#   scripts/pg.sh kill    # stop it at once (immediate shutdown: a crash, for tests)
#   scripts/pg.sh status  # exit 0 when running
#   scripts/pg.sh destroy # stop it and delete the cluster
#
# AMBER_PG_DIR (default /tmp/amber-pg-$UID) and AMBER_PG_PORT (default 55432) choose
# where. As root, the server runs as the `postgres` user (PostgreSQL refuses root).
set -euo pipefail

DIR="${AMBER_PG_DIR:-/tmp/amber-pg-$(id -u)}"
PORT="${AMBER_PG_PORT:-55432}"
URL="postgres://postgres@127.0.0.1:${PORT}/postgres"

bindir() {
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/pg_ctl" ]; then
    pg_config --bindir
    return
  fi
  for d in /usr/lib/postgresql/*/bin; do
    if [ -x "$d/pg_ctl" ]; then
      echo "$d"
      return
    fi
  done
  echo "pg.sh: no PostgreSQL server binaries found (apt install postgresql-15)" >&2
  exit 1
}
BIN="$(bindir)"

# Runs a PostgreSQL binary as the cluster's owner.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

running() {
  [ -f "$DIR/data/PG_VERSION" ] && as_owner "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1
}

# Serialise concurrent starts (parallel test binaries).
lock() {
  exec 9>"/tmp/amber-pg-$(id -u).lock"
  flock 9
}

case "${1:-start}" in
  start)
    lock
    if running; then
      echo "$URL"
      exit 0
    fi
    mkdir -p "$DIR"
    if [ "$(id -u)" = 0 ]; then chown postgres "$DIR"; fi
    chmod 700 "$DIR"
    if [ ! -f "$DIR/data/PG_VERSION" ]; then
      as_owner "$BIN/initdb" -D "$DIR/data" -U postgres --auth=trust --encoding=UTF8 \
        --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; exit 1; }
    fi
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
      -o "-p $PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$DIR -c max_connections=200 -c fsync=on" \
      start >/dev/null 9>&- || { tail -20 "$DIR/server.log" >&2; exit 1; }
    echo "$URL"
    ;;
  url)
    echo "$URL"
    ;;
  stop)
    if running; then as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null; fi
    ;;
  kill)
    if running; then as_owner "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w stop >/dev/null; fi
    ;;
  status)
    running
    ;;
  destroy)
    if running; then as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null; fi
    rm -rf "$DIR"
    ;;
  *)
    echo "usage: scripts/pg.sh start|url|stop|kill|status|destroy" >&2
    exit 2
    ;;
esac
