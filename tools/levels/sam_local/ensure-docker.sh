#!/usr/bin/env bash
# Make sure a Docker daemon answers (what `sam local invoke` runs the functions in).
# When it does not, start one: on Debian/Ubuntu as root, installing docker.io if needed
# (like tools/ensure-services.sh does for PostgreSQL and Redis); anywhere else, stop with
# one line saying what to install. Exit 0 only when `docker info` works.
set -euo pipefail

LOG=${DOCKERD_LOG:-/var/log/mercadofresco-dockerd.log}
# Written only when this script starts dockerd: tools/levels/sam_local/stop-docker.sh stops that one and no other.
PIDFILE=${DOCKERD_PIDFILE:-/run/mercadofresco-dockerd.pid}

answers() { docker info >/dev/null 2>&1; }
can_install() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }

if command -v docker >/dev/null 2>&1 && answers; then
  echo "docker: daemon reachable"; exit 0
fi
if ! can_install; then
  echo "Docker is not running: install Docker (https://docs.docker.com/engine/install/) and start it, then retry." >&2
  exit 1
fi
if ! command -v dockerd >/dev/null 2>&1; then
  echo "docker: installing docker.io (Debian package)"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null 2>&1
fi
if ! pgrep -x dockerd >/dev/null 2>&1; then
  echo "docker: starting dockerd (log: $LOG)"
  # setsid: the daemon outlives the make/pytest that started it, like the services do. It must not
  # inherit its caller's other descriptors either (a `flock` lock around the level, make's jobserver
  # pipes): it would hold them for its whole life, and the next `flock` would wait forever.
  (
    for fd in /proc/self/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
    exec setsid dockerd >"$LOG" 2>&1 </dev/null
  ) &
  echo $! >"$PIDFILE"
fi
for _ in $(seq 1 120); do answers && { echo "docker: daemon reachable"; exit 0; }; sleep 0.5; done
echo "dockerd did not answer within 60 s: see $LOG" >&2
exit 1
