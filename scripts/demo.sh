#!/usr/bin/env bash
# The split email browser across three processes: two workers render the panes (inbox on
# worker-1, message on worker-2, as Config/local-cluster.json places them) and the coordinator
# hosts the browser, selects messages 3, 1 and 4 through the inbox, printing every screen.
# Then failover: worker-2 (the message pane) is SIGKILLed, the pane shows unavailable, worker-2
# is restarted and the pane comes back with its state (the selected message).
# The coordinator serves the gateway at http://127.0.0.1:8570/ (GATEWAY_LISTEN overrides): the
# email browser's page, its inspector at /inspector, /metrics and the probes. With chromium
# installed, a screenshot of the page is kept in docs/email-browser.png (for the README).
# KEEP_SERVING=1 keeps the cluster up at the end until Ctrl-C. The daemons are the email browser
# application's, a package of its own (Examples/EmailBrowser).
# Installs what is missing, builds, and stops every process it started on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

CONFIG=${CONFIG:-Config/local-cluster.json}
SELECTIONS=${SELECTIONS:-3,1,4}
SCRATCH_PATH=${SCRATCH_PATH:-Examples/EmailBrowser/.build}
APP=Examples/EmailBrowser
BIN="$SCRATCH_PATH/debug"
RUN_DIR=${RUN_DIR:-run}/demo
GATEWAY_LISTEN=${GATEWAY_LISTEN:-127.0.0.1:8570}

scripts/install-deps.sh
if ! command -v swift >/dev/null 2>&1; then
  echo "demo.sh needs a Swift 6 toolchain: https://www.swift.org/install/" >&2
  exit 1
fi
echo "building..." >&2
swift build --package-path "$APP" --scratch-path "$SCRATCH_PATH" --product workflow-coordinator >&2
swift build --package-path "$APP" --scratch-path "$SCRATCH_PATH" --product workflow-worker >&2

mkdir -p "$RUN_DIR"
# The config's CURVE keys (created once, kept afterwards): the demo runs encrypted, as a real
# cluster does.
"$BIN/workflow-coordinator" keygen --config "$CONFIG" >"$RUN_DIR/keygen.out"
# A private ipc endpoint (short path: ipc paths are limited to ~100 bytes): the demo never
# collides with a running cluster or a busy port.
ENDPOINT="ipc://${TMPDIR:-/tmp}/workflow-demo-$$.ipc"
PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  local deadline=$((SECONDS + 10))
  for pid in "${PIDS[@]}"; do
    while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -f "${ENDPOINT#ipc://}"
}
trap cleanup EXIT

WAIT_TIMEOUT=${WAIT_TIMEOUT:-60} # seconds any one step may take before the demo fails
OUT="$RUN_DIR/coordinator.out"
: >"$OUT"

start_worker() { # name; appends to its log, records its pid in WORKER_PID
  "$BIN/workflow-worker" --config "$CONFIG" --endpoint "$ENDPOINT" --name "$1" 2>>"$RUN_DIR/$1.log" &
  WORKER_PID=$!
  PIDS+=("$WORKER_PID")
}

# Waits until a line matching the extended regex $2 appears in the coordinator's output after
# line $1 (so an old screen does not count); fails the demo after WAIT_TIMEOUT seconds.
wait_for() {
  local from=$1 pattern=$2 what=$3 deadline=$((SECONDS + WAIT_TIMEOUT))
  until tail -n +"$((from + 1))" "$OUT" | grep -Eq -- "$pattern"; do
    if ((SECONDS >= deadline)); then
      echo "demo.sh: timed out waiting for $what; logs in $RUN_DIR" >&2
      tail -n 20 "$RUN_DIR/coordinator.log" >&2
      exit 1
    fi
    sleep 0.1
  done
}
mark() { wc -l <"$OUT"; }

start_worker worker-1
start_worker worker-2
WORKER2=$WORKER_PID
echo "workers started (logs in $RUN_DIR); the coordinator selects $SELECTIONS:" >&2
# Each demo starts fresh, durable within its run: a store of its own, emptied first.
rm -f "$RUN_DIR"/coordinator.sqlite*
"$BIN/workflow-coordinator" --config "$CONFIG" --endpoint "$ENDPOINT" --store-path "$RUN_DIR/coordinator.sqlite" --demo-selections "$SELECTIONS" \
  --serve-after-demo --print-renderings text --gateway-listen "$GATEWAY_LISTEN" >"$OUT" 2>"$RUN_DIR/coordinator.log" &
PIDS+=($!)
# Show the coordinator's screens as they come (stops by itself when the coordinator exits).
tail -n +1 -f --pid="${PIDS[-1]}" "$OUT" &
PIDS+=($!)

LAST=${SELECTIONS##*,}
wait_for 0 "^\|   #$LAST " "message $LAST to be shown"

echo "=== failover: SIGKILL worker-2 (the message pane's worker) ===" >&2
FROM=$(mark)
kill -KILL "$WORKER2"
wait "$WORKER2" 2>/dev/null || true
wait_for "$FROM" "^status .*MessageWorkflow.*: unavailable" "the message pane to be reported unavailable"

echo "=== restarting worker-2 ===" >&2
FROM=$(mark)
start_worker worker-2
wait_for "$FROM" "^status .*MessageWorkflow.*: running on worker-2" "the message pane running again"
# The coordinator keeps showing the pane's last rendering while it is unavailable and prints a
# screen only when it changes, so show the latest screen now and check it: the restarted pane
# (started from its last acknowledged state) still shows message $LAST, rendered by worker-2.
SCREEN=$(awk '!grab && /^\+-- / { buf = ""; grab = 1 } grab { buf = buf $0 "\n" } grab && /^\+--$/ { grab = 0; last = buf }
              END { printf "%s", last }' "$OUT")
echo "=== the screen after the restart ===" >&2
printf '%s\n' "$SCREEN" >&2
if ! grep -q "^+-- message (rendered by worker-2)" <<<"$SCREEN" || ! grep -Eq "^\|   #$LAST " <<<"$SCREEN"; then
  echo "demo.sh: the message pane did not come back on worker-2 with message $LAST" >&2
  exit 1
fi
echo "=== the message pane is back on worker-2 with its state (message $LAST); stopping ===" >&2

URL=$(grep -o 'gateway listening url=[^ ]*' "$RUN_DIR/coordinator.log" | tail -n 1 | sed 's/.*url=//')
echo "=== the email browser's page: $URL/ (a session per tab; the tree this demo drove: $URL/#shared; inspector: $URL/inspector) ===" >&2
if command -v chromium >/dev/null 2>&1; then
  # The shared root's page as a browser shows it now (it reads the rendering stream once loaded).
  chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --window-size=1100,420 \
    --virtual-time-budget=5000 --screenshot="docs/email-browser.png" "$URL/#shared" >/dev/null 2>&1 &&
    echo "screenshot of the page: docs/email-browser.png" >&2 || echo "chromium could not take the screenshot" >&2
else
  echo "(install chromium to keep a screenshot of the page in docs/email-browser.png)" >&2
fi
if [[ ${KEEP_SERVING:-} == 1 ]]; then
  echo "serving until Ctrl-C..." >&2
  wait "${PIDS[2]}" || true
fi
