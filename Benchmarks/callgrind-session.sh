#!/usr/bin/env bash
# Instruction counts of one session event through the whole product, with callgrind: repeatable
# on a noisy shared machine, unlike times. A coordinator (the gateway, sessions, STORE) and its
# two workers (`session-bench`) each run under callgrind; a client (Benchmarks/session_client.py)
# creates one session, watches its WebSocket rendering stream, and sends WARMUP events, then
# EVENTS more, one at a time: each a POST of 1 to the session's counter, answered 202 once
# durable, and awaited on the stream (the rendering that shows it). The counters of every
# process are zeroed before the EVENTS and dumped after them (`callgrind_control`), so start-up
# and warm-up are not counted; what is counted is each process's instructions (every thread) per
# event, with whatever its timers did meanwhile (heartbeats every 5 s here). MODE=create counts a
# session's creation instead, as session-bench's load creates them: POSTs creating a session of
# "board" one after another (each answered 201), WARMUP of them, then EVENTS counted ones, the
# last one's rendering read until its remote child shows (so every creation's work is counted).
#   swift build -c release --product session-bench && Benchmarks/callgrind-session.sh
#   Benchmarks/callgrind-session.sh .build-other/release        (another build directory)
#   STORE=none EVENTS=500 Benchmarks/callgrind-session.sh       (no store; 500 events)
#   MODE=create Benchmarks/callgrind-session.sh                  (per session created)
# KEEP=DIR keeps the dumps (coordinator.cg, w1.cg, w2.cg) for callgrind_annotate. Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-.build/release}"
built="$(cd "$build" && pwd)/session-bench"
STORE=${STORE:-sqlite}
MODE=${MODE:-events}
case "$MODE" in
events) what="session event" ;;
create) what="session created" ;;
*) echo "MODE is events or create, not $MODE" >&2; exit 64 ;;
esac
EVENTS=${EVENTS:-300}
WARMUP=${WARMUP:-50}
PORT=${PORT:-43900}
out="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$out"
}
trap cleanup EXIT
# Valgrind gives up on this binary's DWARF ("possibly corrupted debuginfo"): a copy without it
# (its symbol table is enough to name functions).
bin="$out/session-bench"
objcopy --strip-debug "$built" "$bin"
case "$STORE" in
none) store='{ "kind": "none" }' ;;
sqlite) store='{ "kind": "sqlite", "path": "'"$out"'/store.sqlite" }' ;;
*) echo "STORE is none or sqlite, not $STORE" >&2; exit 64 ;;
esac
cat >"$out/cluster.json" <<JSON
{ "coordinator": { "endpoint": "ipc://$out/coordinator", "root": "board" },
  "workers": [ { "name": "w1", "pool": "bench" }, { "name": "w2", "pool": "bench" } ],
  "placement": [ { "match": "*CounterWorkflow", "pool": "bench" } ],
  "heartbeat": { "interval_ms": 5000, "liveness": 6 },
  "log": { "level": "warning", "format": "text" },
  "gateway": { "listen": "127.0.0.1:$PORT" },
  "store": $store,
  "sessions": { "enabled": true } }
JSON
# Every process under callgrind, counting from its start (zeroed before the measured events).
run() { # NAME ARGS…
  local name=$1
  shift
  valgrind --tool=callgrind --callgrind-out-file="$out/$name.%p.cg" "$bin" "$@" >/dev/null 2>"$out/$name.log" &
  pids+=("$!")
}
run coordinator --config "$out/cluster.json"
SESSION_BENCH_ROLE=worker run w1 --config "$out/cluster.json" --name w1
SESSION_BENCH_ROLE=worker run w2 --config "$out/cluster.json" --name w2
names=(coordinator w1 w2)
control() { # OPTION: callgrind_control OPTION on each process
  local pid
  for pid in "${pids[@]}"; do callgrind_control "$1" "$pid" >/dev/null; done
}
python3 Benchmarks/session_client.py "$MODE" "http://127.0.0.1:$PORT" "$WARMUP" "$EVENTS" "${pids[*]}" \
  "$(printf '%q ' callgrind_control -z "${pids[@]}")" "$(printf '%q ' callgrind_control -d "${pids[@]}")" \
  || { tail -n 20 "$out"/*.log >&2; exit 1; }
total() { # NAME: the instructions of the dump after the events (the last part file)
  local file
  file=$(ls "$out/$1".*.cg.* 2>/dev/null | sort -V | tail -1)
  grep -h '^summary:' "$file" | awk '{ s += $2 } END { print s + 0 }'
}
printf 'instructions per %s (%s store, %d after %d):' "$what" "$STORE" "$EVENTS" "$WARMUP"
sum=0
for name in "${names[@]}"; do
  ir=$(total "$name")
  per=$((ir / EVENTS))
  sum=$((sum + per))
  printf ' %s %d,' "$name" "$per"
done
printf ' all %d\n' "$sum"
if [[ -n ${KEEP:-} ]]; then
  mkdir -p "$KEEP"
  for name in "${names[@]}"; do cp "$(ls "$out/$name".*.cg.* | sort -V | tail -1)" "$KEEP/$name.cg"; done
fi
