#!/usr/bin/env bash
# The split email browser across three processes: two workers render the panes (inbox on
# worker-1, message on worker-2, as Config/local-cluster.json places them) and the coordinator
# hosts the browser, selects messages 3, 1 and 4 through the inbox, printing every screen.
# Installs what is missing, builds, and stops every process it started on exit.
set -euo pipefail
cd "$(dirname "$0")/.."

CONFIG=${CONFIG:-Config/local-cluster.json}
SELECTIONS=${SELECTIONS:-3,1,4}
SCRATCH_PATH=${SCRATCH_PATH:-.build}
BIN="$SCRATCH_PATH/debug"
RUN_DIR=${RUN_DIR:-run}/demo

scripts/install-deps.sh
if ! command -v swift >/dev/null 2>&1; then
  echo "demo.sh needs a Swift 6 toolchain: https://www.swift.org/install/" >&2
  exit 1
fi
echo "building..." >&2
swift build --scratch-path "$SCRATCH_PATH" --product workflow-coordinator >&2
swift build --scratch-path "$SCRATCH_PATH" --product workflow-worker >&2

mkdir -p "$RUN_DIR"
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

for name in worker-1 worker-2; do
  "$BIN/workflow-worker" --config "$CONFIG" --endpoint "$ENDPOINT" --name "$name" 2>"$RUN_DIR/$name.log" &
  PIDS+=($!)
done
echo "workers started (logs in $RUN_DIR); the coordinator selects $SELECTIONS:" >&2
"$BIN/workflow-coordinator" --config "$CONFIG" --endpoint "$ENDPOINT" --demo-selections "$SELECTIONS" 2>"$RUN_DIR/coordinator.log"
