#!/usr/bin/env bash
# The least-privilege check's evaluator (docs/decisions/0111-iam-evaluator.md): Node.js 18+ and npm, then
# @cloud-copilot/iam-simulate as pinned by iam-simulate/package-lock.json (npm ci). Without Node: on
# Debian/Ubuntu as root, install the nodejs and npm packages (as tools/levels/sam_local/ensure-docker.sh does for
# Docker); anywhere else, stop with one line saying what to install. Exit 0 only when the evaluator can run.
set -euo pipefail
cd "$(dirname "$0")/iam-simulate"

node_ok() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 &&
    [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 18 ]
}
can_install() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }

if ! node_ok; then
  if ! can_install; then
    echo "The least-privilege check needs Node.js 18+ and npm: install them (Debian: apt-get install nodejs npm; elsewhere https://nodejs.org), then retry." >&2
    exit 1
  fi
  echo "iam evaluator: installing nodejs and npm (Debian packages)"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null 2>&1
  node_ok || { echo "the nodejs package is older than 18: install Node.js 18+ (https://nodejs.org)" >&2; exit 1; }
fi
echo "iam evaluator: npm ci in $(pwd)"
npm ci --no-audit --no-fund --loglevel=error
touch node_modules/.installed
