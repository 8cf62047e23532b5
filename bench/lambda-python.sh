#!/usr/bin/env bash
# A current CPython 3.13 for the cold-start bench, from Debian's packages: prints the command that
# runs it (its own loader and libraries, so nothing on this machine changes), built once and cached.
#
# Why: Lambda's python3.13 runtime follows the 3.13 patch releases; the interpreter that `make setup`
# finds may be an early one (pyenv's 3.13.0 here). Before gh-142183 (fixed in the 3.13 line in
# March 2026, 3.13.14 has it) CPython freed a frame-stack chunk as soon as a call returned below it,
# so code that recurses across a chunk's edge mmaps and munmaps 16 KB per call: importing a
# function hit it up to ~3,000 times (urllib3's regexes, compiled at the depth the handler's imports
# reach), ~12 ms that Lambda does not pay and `import boto3` alone barely hits. Debian unstable
# carries the newest 3.13 release it packages.
#
# Usage: bench/lambda-python.sh   (root, debootstrap; the tree goes to LAMBDA_PYTHON_DIR)
set -euo pipefail

SUITE=${LAMBDA_PYTHON_SUITE:-sid}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
DIR=${LAMBDA_PYTHON_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mercadofresco/lambda-python3.13}
RECETA=$(sha256sum "$0" | cut -c1-16)

case "$(uname -m)" in
  x86_64 | amd64) LOADER=ld-linux-x86-64.so.2; TRIPLE=x86_64-linux-gnu ;;
  aarch64 | arm64) LOADER=ld-linux-aarch64.so.1; TRIPLE=aarch64-linux-gnu ;;
  *) echo "unsupported machine $(uname -m): Lambda runs x86_64 and arm64 only" >&2; exit 1 ;;
esac
comando() {
  echo "$DIR/usr/lib/$TRIPLE/$LOADER --library-path $DIR/usr/lib/$TRIPLE $DIR/usr/bin/python3.13"
}

if [ "$(cat "$DIR/.receta" 2>/dev/null)" = "$RECETA" ]; then comando; exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "lambda-python: debootstrap needs root; set BENCH_COLD_PYTHON to a current python3.13 instead" >&2; exit 1
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; } >/dev/null 2>&1 \
    || { echo "lambda-python: cannot install debootstrap" >&2; exit 1; }
fi
echo "lambda-python: Debian $SUITE's python3.13 into $DIR (once)" >&2
rm -rf "$DIR" && mkdir -p "$(dirname "$DIR")"
debootstrap --variant=minbase --include=python3.13 "$SUITE" "$DIR" "$MIRROR" >"$DIR.log" 2>&1 \
  || { tail -20 "$DIR.log" >&2; exit 1; }
rm -rf "$DIR.log" "$DIR"/var/cache/apt/archives/*.deb "$DIR"/var/lib/apt/lists/*
# shellcheck disable=SC2046
$(comando) -I -S -c 'import sys; print("lambda-python:", sys.version.split()[0], file=sys.stderr)'
echo "$RECETA" >"$DIR/.receta"
comando
