#!/usr/bin/env bash
# Build, once, the Lambda Python 3.13 base image `sam local invoke` asks for, from Debian's
# packages and PyPI only (no container registry is needed or reached): Debian 13's Python
# 3.13, the runtime interface client (awslambdaric) and the runtime's own boto3 in
# /var/runtime, /var/runtime/bootstrap as Lambda's runtimes have it, /var/task and /opt,
# and, as AWS's image has them, /lambda-entrypoint.sh and the Runtime Interface Emulator
# (SAM CLI's own copy) in /usr/local/bin/aws-lambda-rie: the emulated account of the deploy
# level (MiniStack) starts the image with the handler as its argument and talks to the RIE.
# Tagged with the exact names SAM CLI and MiniStack look for (public.ecr.aws/lambda/python:3.13-<arch>,
# and public.ecr.aws/lambda/python:3.13).
# Idempotent: an image built from this same recipe already present => nothing to do.
set -euo pipefail
cd "$(dirname "$0")/../../.."

PYTHON=${PYTHON:-.venv/bin/python}
SUITE=trixie                      # Debian 13: python3 is 3.13, like Lambda's python3.13 runtime
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
AWSLAMBDARIC=4.2.2
# The runtime's own boto3/botocore: the project's pins (the layer may bring its own, first on the path).
BOTO3=$(grep -E '^(boto3|botocore)==' requirements/constraints.txt | tr '\n' ' ')

case "$(uname -m)" in
  x86_64 | amd64) ARCH=x86_64; DEB_ARCH=amd64; WHEEL_PLATFORM=manylinux2014_x86_64 ;;
  aarch64 | arm64) ARCH=arm64; DEB_ARCH=arm64; WHEEL_PLATFORM=manylinux2014_aarch64 ;;
  *) echo "unsupported machine $(uname -m): Lambda runs x86_64 and arm64 only" >&2; exit 1 ;;
esac
TAG=public.ecr.aws/lambda/python:3.13-$ARCH
TAG_SIN_ARCH=public.ecr.aws/lambda/python:3.13
RIE=$("$PYTHON" -c 'import samcli, pathlib; print(pathlib.Path(samcli.__file__).parent / "local/rapid")')/aws-lambda-rie-$ARCH
# The recipe's identity: this script, the pinned versions and the RIE; a change rebuilds.
RECETA=$( { cat "$0"; echo "$BOTO3"; sha256sum <"$RIE"; } | sha256sum | cut -c1-16)

if [ "$(docker image inspect -f '{{index .Config.Labels "mercadofresco.receta"}}' "$TAG" 2>/dev/null)" = "$RECETA" ]; then
  docker tag "$TAG" "$TAG_SIN_ARCH"
  echo "image $TAG: up to date"; exit 0
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null 2>&1
  else
    echo "debootstrap is needed to build $TAG: install it (apt-get install debootstrap) and retry." >&2; exit 1
  fi
fi

inicio=$(date +%s)
RAIZ=$(mktemp -d /var/tmp/mf-lambda-python.XXXXXX)
trap 'rm -rf "$RAIZ"' EXIT
echo "image $TAG: building (Debian $SUITE + awslambdaric $AWSLAMBDARIC + $BOTO3) in $RAIZ"
debootstrap --variant=minbase --arch="$DEB_ARCH" --include=python3,ca-certificates \
  "$SUITE" "$RAIZ" "$MIRROR" >"$RAIZ.log" 2>&1 || { tail -20 "$RAIZ.log" >&2; exit 1; }
rm -f "$RAIZ.log"
rm -rf "$RAIZ"/var/cache/apt/archives/*.deb "$RAIZ"/var/lib/apt/lists/* "$RAIZ"/usr/share/doc/* "$RAIZ"/usr/share/man/*

# Wheels for the image's CPU and Python, fetched by the host's pip (the image has no pip).
"$PYTHON" -m pip install -q --no-compile --target "$RAIZ/var/runtime" --only-binary=:all: \
  --platform "$WHEEL_PLATFORM" --python-version 3.13 --implementation cp \
  "awslambdaric==$AWSLAMBDARIC" $BOTO3
mkdir -p "$RAIZ/var/task" "$RAIZ/opt/python" "$RAIZ/opt/extensions" "$RAIZ/tmp"
chmod 1777 "$RAIZ/tmp"
# Lambda's python3.13 bootstrap: function code, then the layers, then the runtime's packages.
cat >"$RAIZ/var/runtime/bootstrap" <<'BOOT'
#!/bin/sh
export PYTHONPATH="/var/task:/opt/python/lib/python3.13/site-packages:/opt/python:/var/runtime${PYTHONPATH:+:$PYTHONPATH}"
exec /usr/bin/python3.13 -m awslambdaric "${_HANDLER:-$AWS_LAMBDA_FUNCTION_HANDLER}"
BOOT
chmod 755 "$RAIZ/var/runtime/bootstrap"
# AWS's entrypoint: the handler is its argument; without a Runtime API (outside Lambda) it starts the RIE.
install -D -m 755 "$RIE" "$RAIZ/usr/local/bin/aws-lambda-rie"
cat >"$RAIZ/lambda-entrypoint.sh" <<'ENTRADA'
#!/bin/sh
[ $# -ge 1 ] && export _HANDLER="$1"
if [ -z "${AWS_LAMBDA_RUNTIME_API}" ]; then
  exec /usr/local/bin/aws-lambda-rie /var/runtime/bootstrap
fi
exec /var/runtime/bootstrap
ENTRADA
chmod 755 "$RAIZ/lambda-entrypoint.sh"

tar -C "$RAIZ" -c . | docker import \
  --change 'ENV LANG=C.UTF-8 TZ=:/etc/localtime LAMBDA_TASK_ROOT=/var/task LAMBDA_RUNTIME_DIR=/var/runtime PATH=/usr/local/bin:/usr/bin:/bin:/opt/bin' \
  --change 'WORKDIR /var/task' \
  --change 'ENTRYPOINT ["/lambda-entrypoint.sh"]' \
  --change "LABEL mercadofresco.receta=$RECETA" \
  - "$TAG" >/dev/null
docker tag "$TAG" "$TAG_SIN_ARCH"
echo "image $TAG: built in $(( $(date +%s) - inicio )) s ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{printf "%d MB", $1/1e6}'))"
