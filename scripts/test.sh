#!/usr/bin/env bash
# Runs every unit and integration test. Works on a fresh machine: installs libzmq first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --build-tests "$@"
swift test --skip-build "$@"
