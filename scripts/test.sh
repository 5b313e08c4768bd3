#!/usr/bin/env bash
# Runs every unit and integration test, then the Examples/OrderFulfilment package's. Works on a
# fresh machine: installs libzmq first. Arguments (e.g. --filter X) apply to the main package.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --build-tests "$@"
swift test --skip-build "$@"
# The second application, a package of its own that depends on this one by path, as a user's
# app does: its coordinator and workers run as real processes in its test.
swift build --build-tests --package-path Examples/OrderFulfilment
swift test --skip-build --package-path Examples/OrderFulfilment
