#!/usr/bin/env bash
# Runs every unit and integration test, then the example applications' (Examples/*). Works on a
# fresh machine: installs libzmq (and chromium, for the browser test, and postgresql, for the
# PostgreSQL store's tests) first. Arguments (e.g. --filter X) run only those tests of the main
# package.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The browser test drives headless Chromium (Debian's `chromium`); without it that test is
# skipped, saying why.
if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  echo "installing chromium for the browser test..." >&2
  if ! ($SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null); then
    echo "chromium could not be installed here: the browser test will be skipped" >&2
  fi
fi
# The PostgreSQL store's tests start a private server of their own (Debian's `postgresql`: initdb
# and postgres, run as the `postgres` user the package creates); the package's own cluster is not
# used. Without it (or with POSTGRES_TESTS=off) those tests are skipped, saying why.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  echo "installing postgresql for the store tests..." >&2
  if ! ($SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null); then
    echo "postgresql could not be installed here: the PostgreSQL store tests will be skipped" >&2
  fi
fi
# The network lab's tools; its tests (suite "Network lab") skip themselves, saying why, when a lab
# cannot be made here (not root, no nftables, NETLAB=off).
scripts/netlab.sh install || echo "network lab: iproute2/nftables could not be installed" >&2
if reason=$(scripts/netlab.sh check); then
  echo "network lab: available; its tests run"
else
  echo "network lab: unavailable ($reason); its tests will be skipped"
fi
swift build --build-tests "$@"
# The passes, and what each is for:
#  1. every test of this package but the flood tests, in parallel;
#  2. the flood tests (Scenarios/Flood) alone: a hostile peer at full speed keeps both cores busy
#     by design, which beside other tests would starve their processes of CPU;
#  3. each example application, a package of its own that depends on this one by path as a
#     user's app does: its workflows, and its coordinator and workers as real processes (the
#     email browser's page in a real browser, scripts/cluster.sh and the systemd units included).
# With arguments (e.g. --filter X) only those tests of this package run.
if [[ $# -eq 0 ]]; then
  swift test --skip-build --skip ClusterFloodTests
  swift test --skip-build --filter ClusterFloodTests
else
  swift test --skip-build "$@"
  exit 0
fi
for app in Examples/EmailBrowser Examples/OrderFulfilment; do
  swift build --build-tests --package-path "$app"
  swift test --skip-build --package-path "$app"
done
