#!/usr/bin/env bash
# Rendering deltas, in bytes, each beside the whole frame of the same run:
#   - one changed row of a 1,000-row keyed list (the diff alone; goal: at most 2 % of the whole);
#   - one click in the email browser's page: the characters the page's stream received for it
#     (headless Chromium on a real coordinator and two real workers), beside the whole rendering.
# Needs chromium for the second figure (scripts/test.sh installs it).
#
#   scripts/bench-deltas.sh
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build --build-tests >"$log" 2>&1 || { cat "$log"; exit 1; }
swift test --skip-build --filter 'JSONDeltaTests/thousandRows' 2>&1 | grep '^deltas:' || { echo "the 1,000-row figure failed" >&2; exit 1; }
swift build --build-tests --package-path Examples/EmailBrowser >"$log" 2>&1 || { cat "$log"; exit 1; }
swift test --skip-build --package-path Examples/EmailBrowser --filter 'DeltaBrowserTests/clickAndResumeAsDeltas' 2>&1 | grep '^deltas:' \
  || { echo "the email browser's figure failed (is chromium installed?)" >&2; exit 1; }
