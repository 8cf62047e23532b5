#!/usr/bin/env bash
# Stop the dockerd that tools/levels/sam_local/ensure-docker.sh started (its pid file), and only that one:
# a daemon that was already running stays. Images stay on disk (the Lambda base image is not rebuilt).
set -euo pipefail

PIDFILE=${DOCKERD_PIDFILE:-/run/mercadofresco-dockerd.pid}

[ -f "$PIDFILE" ] || exit 0
pid=$(cat "$PIDFILE")
rm -f "$PIDFILE"
if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ]; then
  kill "$pid"
  for _ in $(seq 1 60); do [ -d "/proc/$pid" ] || { echo "docker: dockerd stopped"; exit 0; }; sleep 0.5; done
  echo "dockerd ($pid) did not stop within 30 s" >&2
  exit 1
fi
