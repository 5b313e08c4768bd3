#!/usr/bin/env bash
# Runs every unit and integration test, then the Examples/OrderFulfilment package's. Works on a
# fresh machine: installs libzmq (and chromium, for the browser test) first. Arguments (e.g. --filter X) apply to the main package.
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
# The network lab's tools; its tests (suite "Network lab") skip themselves, saying why, when a lab
# cannot be made here (not root, no nftables, NETLAB=off).
scripts/netlab.sh install || echo "network lab: iproute2/nftables could not be installed" >&2
if reason=$(scripts/netlab.sh check); then
  echo "network lab: available; its tests run"
else
  echo "network lab: unavailable ($reason); its tests will be skipped"
fi
swift build --build-tests "$@"
# The flood tests keep both cores busy for their whole length by design (a hostile peer at full
# speed): run alongside everything else they starve the other tests' processes of CPU, so they get
# a pass of their own, after the rest. The descriptor-leak check counts the process's open file
# descriptors, which tests running beside it move by hundreds: it runs alone, last. With
# arguments (e.g. --filter X) only those tests run.
if [[ $# -eq 0 ]]; then
  swift test --skip-build --skip 'ClusterFloodTests|HandleHygieneTests'
  swift test --skip-build --filter ClusterFloodTests
  swift test --skip-build --filter HandleHygieneTests
else
  swift test --skip-build "$@"
fi
# The second application, a package of its own that depends on this one by path, as a user's
# app does: its coordinator and workers run as real processes in its test.
swift build --build-tests --package-path Examples/OrderFulfilment
swift test --skip-build --package-path Examples/OrderFulfilment
