#!/usr/bin/env bash
# Sessions at scale: a real coordinator and two real workers (release builds of
# Benchmarks/SessionBench, ipc endpoints, the embedded SQLite store), and a load generator over
# real HTTP and WebSockets. Prints one table, each figure beside a baseline from the same run:
#   scripts/bench-sessions.sh        (SESSIONS=10000 EVENT_SESSIONS=1000 RATE=1000 SECONDS_EACH=10 PORT=43500 STORE=sqlite [SYNC=full|normal] [BATCH=N] [PROBE=command])
# The coordinator's memory is its RSS growth, printed with the part of it that is anonymous
# (heap, allocator arenas, stacks: smaps_rollup) beside the file-backed or shared rest. PROBE, if
# set, runs once the sessions are created, with COORDINATOR_PID and STORE_DIR in its environment
# (to look at the process and the store's files at that moment; its output goes to stderr).
# Every session is the root "board": one counter, a remote child placed least-loaded on the two
# workers. Everything started here is stopped, and its temporary directory removed, at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
SESSIONS=${SESSIONS:-10000}
EVENT_SESSIONS=${EVENT_SESSIONS:-1000}
RATE=${RATE:-1000}
SECONDS_EACH=${SECONDS_EACH:-10}
PORT=${PORT:-43500}
STORE=${STORE:-sqlite} # or none: no store (sessions live in memory; no passivated row)
SYNC=${SYNC:-}         # the SQLite store's store.sync: full (the default: an fsync per commit) or normal
BATCH=${BATCH:-}       # store.max_commit_batch (default 256; 1: each tree commits alone, as before group commit across trees)
scratch="${BENCH_SCRATCH:-.build}"
swift build -c release --scratch-path "$scratch" --product session-bench >&2
bin="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/session-bench"
dir=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT
url="http://127.0.0.1:$PORT"
cat >"$dir/cluster.json" <<JSON
{ "coordinator": { "endpoint": "ipc://$dir/coordinator", "root": "board" },
  "workers": [ { "name": "w1", "pool": "bench" }, { "name": "w2", "pool": "bench" } ],
  "placement": [ { "match": "*CounterWorkflow", "pool": "bench" } ],
  "log": { "level": "warning", "format": "text" },
  "gateway": { "listen": "127.0.0.1:$PORT", "max_connections": 4096 },
  "store": { "kind": "$STORE", "path": "store.sqlite"${SYNC:+, \"sync\": \"$SYNC\"}${BATCH:+, \"max_commit_batch\": $BATCH} },
  "sessions": { "enabled": true, "idle_timeout_ms": 3600000, "max_sessions": $((SESSIONS * 2)),
                "max_creations_per_second": 100000 } }
JSON
rss() { awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$1/status"; }
# The coordinator's resident memory that is anonymous (its heap, stacks, the allocator's arenas),
# as /proc/PID/smaps_rollup counts it; the rest of its RSS is file-backed or shared mappings
# (the binary, libraries, SQLite's -shm wal-index).
anonymous() { awk '/^Anonymous:/ { print $2 * 1024 }' "/proc/$1/smaps_rollup"; }
start_coordinator() { # log name
  "$bin" --config "$dir/cluster.json" 2>"$dir/$1.log" >/dev/null &
  coordinator=$!
  pids+=("$coordinator")
}
# Waits until the shared root shows its remote child and, with "workers", until both workers
# joined. (Not "workers" after a restart on the store: the tree lists every session, and that
# answer would count in the memory measured next.)
wait_ready() {
  for _ in $(seq 600); do
    if { [[ ${1:-} != workers ]] || curl -sf "$url/api/tree" | python3 -c '
import json, sys
tree = json.load(sys.stdin)
sys.exit(0 if len([w for w in tree.get("workers", []) if w.get("lastHeardMillisecondsAgo") is not None]) == 2 else 1)' 2>/dev/null; } &&
      curl -sf "$url/api/rendering" | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["rendering"]["c"]["count"] >= 0 else 1)' 2>/dev/null; then
      return 0
    fi
    sleep 0.2
  done
  echo "the cluster did not become ready; the coordinator's log:" >&2
  cat "$dir"/coordinator*.log >&2
  exit 1
}
settle() { sleep 3; }

start_coordinator coordinator
for name in w1 w2; do
  SESSION_BENCH_ROLE=worker "$bin" --config "$dir/cluster.json" --name "$name" 2>"$dir/$name.log" >/dev/null &
  pids+=("$!")
done
workers=("${pids[1]}" "${pids[2]}")
wait_ready workers
settle
idle=$(rss "$coordinator")
idle_anonymous=$(anonymous "$coordinator")
workers_idle=$(( $(rss "${workers[0]}") + $(rss "${workers[1]}") ))

created=$(SESSION_BENCH_ROLE=load "$bin" create "$url" "$SESSIONS" "$dir/ids")
settle
active=$(rss "$coordinator")
active_anonymous=$(anonymous "$coordinator")
if [[ -n ${PROBE:-} ]]; then COORDINATOR_PID=$coordinator STORE_DIR=$dir bash -c "$PROBE" >&2; fi
workers_active=$(( $(rss "${workers[0]}") + $(rss "${workers[1]}") ))

spread=$(SESSION_BENCH_ROLE=load "$bin" events "$url" "$dir/ids" "$EVENT_SESSIONS" "$RATE" "$SECONDS_EACH")
shared=$(SESSION_BENCH_ROLE=load "$bin" events "$url" "$dir/ids" 1 "$RATE" "$SECONDS_EACH" shared)

# A coordinator started again on the same store resumes every session passivated.
kill -TERM "$coordinator"
wait "$coordinator" || true
start_coordinator coordinator-resumed
wait_ready
settle
passivated=$(rss "$coordinator")
listed=$(curl -sf "$url/api/sessions" | python3 -c 'import json,sys; s=json.load(sys.stdin)["sessions"]; print(len(s), sum(1 for x in s if x["state"] == "passivated"))')

python3 - "$idle" "$active" "$workers_idle" "$workers_active" "$passivated" "$SESSIONS" "$listed" "$created" "$spread" "$shared" "$EVENT_SESSIONS" "$RATE" "$idle_anonymous" "$active_anonymous" <<'PY'
import json, os, sys
idle, active, workers_idle, workers_active, passivated, sessions = map(int, sys.argv[1:7])
listed_all, listed_passivated = map(int, sys.argv[7].split())
created, spread, shared = (json.loads(a) for a in sys.argv[8:11])
event_sessions, rate = int(sys.argv[11]), int(sys.argv[12])
idle_anonymous, active_anonymous = int(sys.argv[13]), int(sys.argv[14])
kib = lambda b: f"{b / 1024:.1f} KiB"
mib = lambda b: f"{b / 1048576:.1f} MiB"
ms = lambda v: f"{v:.1f} ms"
rows = []
def row(figure, value, baseline, goal, met):
    rows.append((figure, value, baseline, goal, "-" if met is None else ("yes" if met else "NO")))
per_active = (active - idle) / sessions
row(f"{sessions:,} active sessions (root + 1 remote child each)",
    f"{created['created']:,} in {created['all_rendered_seconds']:.0f} s", "-", f"{sessions:,} on 1 coordinator + 2 workers",
    created["created"] == sessions)
row("coordinator memory per active session", kib(per_active), f"idle coordinator {mib(idle)}", "≤ 16 KiB", per_active <= 16 * 1024)
per_anonymous = (active_anonymous - idle_anonymous) / sessions
row("  of which anonymous (smaps_rollup: heap, arenas, stacks)", kib(per_anonymous), f"idle coordinator {mib(idle_anonymous)}", "(report)", None)
row("  of which file-backed or shared (RSS minus anonymous)", kib(per_active - per_anonymous),
    f"idle coordinator {mib(idle - idle_anonymous)}", "(report)", None)
row("workers' memory per remote child (both)", kib((workers_active - workers_idle) / sessions), f"idle workers {mib(workers_idle)}", "(report)", None)
per_passivated = (passivated - idle) / sessions
if listed_all:
    row(f"coordinator memory per passivated session ({listed_passivated:,} resumed from SQLite)", f"{per_passivated:.0f} B",
        f"idle coordinator {mib(idle)}", "≤ 1 KiB", per_passivated <= 1024 and listed_passivated == sessions)
else:
    row("coordinator memory per passivated session", "- (no store)", "-", "≤ 1 KiB", None)
row(f"events accepted/s over {event_sessions:,} sessions ({rate:,}/s offered)", f"{spread['accepted_per_second']:.0f}/s",
    f"shared root {shared['accepted_per_second']:.0f}/s", f"{rate:,}/s", spread["accepted_per_second"] >= 0.98 * rate and spread["refused"] == 0)
row("POST → session's WebSocket rendering, p50", ms(spread["p50_ms"]), f"shared root {ms(shared['p50_ms'])}", "(report)", None)
row("POST → session's WebSocket rendering, p99", ms(spread["p99_ms"]), f"shared root {ms(shared['p99_ms'])}", "≤ 20 ms",
    0 <= spread["p99_ms"] <= 20 and spread["not_shown"] == 0)
row("POST → session's WebSocket rendering, max", ms(spread["max_ms"]), f"shared root {ms(shared['max_ms'])}", "(report)", None)
load = os.getloadavg()
print(f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end")
widths = [max(len(str(r[i])) for r in rows + [("figure", "value", "baseline", "goal", "met?")]) for i in range(5)]
line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"
print(line(("figure", "value", "baseline", "goal", "met?")))
print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
for r in rows: print(line(r))
for name, result in (("sessions", spread), ("shared root", shared)):
    print(f"{name}: {json.dumps(result, sort_keys=True)}")
PY
