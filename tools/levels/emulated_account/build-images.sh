#!/usr/bin/env bash
# Build, once, the database and cache image the emulated account (MiniStack) starts behind Aurora and
# ElastiCache Serverless: Debian 13's PostgreSQL 17 and Valkey 8.1 in one image, from Debian's packages
# only (no container registry is reachable here). Tagged with the names MiniStack 1.5.33 asks Docker
# for, so it never pulls: postgres:17-alpine (Aurora PostgreSQL 17.x) and valkey/valkey:8.1-alpine
# (ElastiCache Serverless Valkey 8). Its /usr/local/bin/docker-entrypoint.sh honours what MiniStack
# gives the official images: POSTGRES_USER/POSTGRES_PASSWORD/POSTGRES_DB and `postgres -c ...` as root
# (initdb once, then the server as user postgres, passwords required from the network); anything else
# is valkey-server's arguments, and redis-cli (valkey-cli under the name MiniStack's probes use) answers.
# Debian's packages, not Alpine's: only the tag's name is the official one.
# Idempotent: an image built from this same recipe already present => nothing to do.
set -euo pipefail
cd "$(dirname "$0")/../../.."

SUITE=trixie
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
TAGS=(postgres:17-alpine valkey/valkey:8.1-alpine)
RECETA=$(sha256sum <"$0" | cut -c1-16)

case "$(uname -m)" in
  x86_64 | amd64) DEB_ARCH=amd64 ;;
  aarch64 | arm64) DEB_ARCH=arm64 ;;
  *) echo "unsupported machine $(uname -m)" >&2; exit 1 ;;
esac

al_dia=1
for tag in "${TAGS[@]}"; do
  [ "$(docker image inspect -f '{{index .Config.Labels "mercadofresco.receta"}}' "$tag" 2>/dev/null)" = "$RECETA" ] || al_dia=0
done
if [ "$al_dia" = 1 ]; then echo "images ${TAGS[*]}: up to date"; exit 0; fi
if ! command -v debootstrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null 2>&1
  else
    echo "debootstrap is needed to build ${TAGS[*]}: install it (apt-get install debootstrap) and retry." >&2; exit 1
  fi
fi

inicio=$(date +%s)
RAIZ=$(mktemp -d /var/tmp/mf-servicios.XXXXXX)
trap 'rm -rf "$RAIZ" "$RAIZ.log"' EXIT
echo "images ${TAGS[*]}: building (Debian $SUITE: postgresql-17, valkey-server) in $RAIZ"
debootstrap --variant=minbase --arch="$DEB_ARCH" \
  --include=postgresql-17,valkey-server,valkey-tools,ca-certificates \
  "$SUITE" "$RAIZ" "$MIRROR" >"$RAIZ.log" 2>&1 || { tail -20 "$RAIZ.log" >&2; exit 1; }
# The package's own cluster and configuration are not used: the entrypoint makes one in PGDATA.
rm -rf "$RAIZ"/var/lib/postgresql/17 "$RAIZ"/etc/postgresql/17
rm -rf "$RAIZ"/var/cache/apt/archives/*.deb "$RAIZ"/var/lib/apt/lists/* "$RAIZ"/usr/share/doc/* "$RAIZ"/usr/share/man/*
mkdir -p "$RAIZ/data" "$RAIZ/var/lib/postgresql/data"
[ -e "$RAIZ/usr/bin/redis-cli" ] || ln -s valkey-cli "$RAIZ/usr/bin/redis-cli"

cat >"$RAIZ/usr/local/bin/docker-entrypoint.sh" <<'ENTRADA'
#!/bin/sh
# postgres [-c ...]: the official postgres image's contract; anything else: valkey-server's arguments.
set -eu
if [ "${1:-}" != postgres ]; then
  [ "${1:-}" = valkey-server ] && shift
  exec valkey-server "$@"
fi
shift
BIN=/usr/lib/postgresql/17/bin
PGDATA=${PGDATA:-/var/lib/postgresql/data}
como_postgres() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
mkdir -p "$PGDATA" /var/run/postgresql
chown -R postgres:postgres "$PGDATA" /var/run/postgresql
chmod 700 "$PGDATA"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
  clave=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$clave"
  chown postgres "$clave"
  como_postgres "$BIN/initdb" -D "$PGDATA" -U "${POSTGRES_USER:-postgres}" --pwfile="$clave" \
    --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$clave"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ -n "${POSTGRES_DB:-}" ] && [ "$POSTGRES_DB" != postgres ]; then
    como_postgres "$BIN/pg_ctl" -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    como_postgres "$BIN/createdb" -U "${POSTGRES_USER:-postgres}" "$POSTGRES_DB"
    como_postgres "$BIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
  fi
fi
exec setpriv --reuid=postgres --regid=postgres --init-groups "$BIN/postgres" -D "$PGDATA" -c listen_addresses='*' "$@"
ENTRADA
chmod 755 "$RAIZ/usr/local/bin/docker-entrypoint.sh"

tar -C "$RAIZ" -c . | docker import \
  --change 'ENV LANG=C.UTF-8 PATH=/usr/local/bin:/usr/bin:/bin:/usr/lib/postgresql/17/bin PGDATA=/var/lib/postgresql/data' \
  --change 'ENTRYPOINT ["docker-entrypoint.sh"]' \
  --change 'CMD ["postgres"]' \
  --change "LABEL mercadofresco.receta=$RECETA" \
  - "${TAGS[0]}" >/dev/null
for tag in "${TAGS[@]:1}"; do docker tag "${TAGS[0]}" "$tag"; done
echo "images ${TAGS[*]}: built in $(( $(date +%s) - inicio )) s ($(docker image inspect -f '{{.Size}}' "${TAGS[0]}" | awk '{printf "%d MB", $1/1e6}'))"
