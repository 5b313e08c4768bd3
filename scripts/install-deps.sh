#!/usr/bin/env bash
# Installs the system packages the build needs (libzmq3-dev, libsqlite3-dev, pkg-config) when
# they are missing. Safe to run repeatedly; uses sudo only when not already root.
set -euo pipefail
if [[ -f /usr/include/zmq.h && -f /usr/include/sqlite3.h ]] && command -v pkg-config >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "installing libzmq3-dev, libsqlite3-dev and pkg-config..." >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libzmq3-dev libsqlite3-dev pkg-config >/dev/null
