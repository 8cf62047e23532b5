#!/usr/bin/env bash
# Make sure the PostgreSQL and Redis that the tests and the local run use are reachable.
# When they are not, start them: on Debian/Ubuntu as root, installing the packages if
# needed; anywhere else, stop with one line saying what to do.
set -euo pipefail

DATABASE_URL=${DATABASE_URL:-postgresql://postgres:postgres@127.0.0.1:5432/postgres}
REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0}

hostport() {  # scheme://user:pass@host:port/db -> "host port"
  local rest=${1#*://}; rest=${rest#*@}; rest=${rest%%/*}
  echo "${rest%%:*} ${rest##*:}"
}
reachable() { timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; }
wait_for() {
  for _ in $(seq 1 60); do reachable "$1" "$2" && return 0; sleep 0.5; done
  return 1
}
can_install() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }
apt_updated=""
apt_install() {
  [ -n "$apt_updated" ] || { apt-get update -qq >/dev/null; apt_updated=1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

read -r pg_host pg_port <<<"$(hostport "$DATABASE_URL")"
read -r rd_host rd_port <<<"$(hostport "$REDIS_URL")"

if ! reachable "$pg_host" "$pg_port"; then
  if ! can_install; then
    echo "PostgreSQL is not reachable at $pg_host:$pg_port: start one there, or set DATABASE_URL." >&2; exit 1
  fi
  echo "PostgreSQL not reachable at $pg_host:$pg_port: starting it"
  command -v pg_ctlcluster >/dev/null 2>&1 || apt_install postgresql
  version=$(ls /etc/postgresql | sort -V | tail -1)
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  wait_for "$pg_host" "$pg_port" || { echo "PostgreSQL did not come up on $pg_host:$pg_port" >&2; exit 1; }
  # A fresh Debian cluster wants a password over TCP: give the postgres role the one
  # the default DATABASE_URL uses (a local test database, nothing else).
  su postgres -c "psql -qc \"ALTER USER postgres PASSWORD 'postgres'\"" >/dev/null 2>&1 || true
fi

if ! reachable "$rd_host" "$rd_port"; then
  if ! can_install; then
    echo "Redis is not reachable at $rd_host:$rd_port: start one there (redis-server), or set REDIS_URL." >&2; exit 1
  fi
  echo "Redis not reachable at $rd_host:$rd_port: starting it"
  command -v redis-server >/dev/null 2>&1 || apt_install redis-server
  redis-server --daemonize yes --bind 127.0.0.1 --port "$rd_port" --save "" --appendonly no
  wait_for "$rd_host" "$rd_port" || { echo "Redis did not come up on $rd_host:$rd_port" >&2; exit 1; }
fi
echo "services: PostgreSQL $pg_host:$pg_port and Redis $rd_host:$rd_port reachable"
