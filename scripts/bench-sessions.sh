#!/usr/bin/env bash
# Sessions at scale: real coordinators and real workers (release builds of Benchmarks/SessionBench,
# ipc endpoints) and a load generator over real HTTP and WebSockets. Prints one table, each figure
# beside a baseline from the same run. Every session is the root "board": one counter, a remote
# child placed least-loaded on its coordinator's two workers. Everything started here is stopped,
# and its temporary directories removed, at the end.
#
#   scripts/bench-sessions.sh                   one coordinator, two workers, the store STORE
#   COORDINATORS=4 scripts/bench-sessions.sh    four coordinators spreading sessions on a private
#                                               PostgreSQL, two workers each
#
# One coordinator (COORDINATORS=1, the default):
#   SESSIONS=10000       sessions created in all; the first BASELINE_HELD of them first, then events
#                        (the 1,000-held baseline), then the rest. Creation is timed per tenth of
#                        SESSIONS (sessions/s for 0–10 %, …, 90–100 %, printed before the table).
#   BASELINE_HELD=1000   sessions held when the baseline events run (at least EVENT_SESSIONS, at
#                        most SESSIONS: with SESSIONS ≤ 1,000 both events runs hold them all).
#   EVENT_SESSIONS=1000  sessions the events are spread over (the first created), each watched by a
#                        WebSocket client.
#   RATE=1000            events/s offered, for SECONDS_EACH seconds, in each events run: with
#                        BASELINE_HELD held, with SESSIONS held, and all to the shared root.
#   STORE=sqlite         the store: sqlite, or none (sessions in memory; no passivated row).
#   SYNC=full|normal     the SQLite store's store.sync (default full: an fsync per commit).
#   BATCH=N              store.max_commit_batch (default 256; 1: each tree commits alone).
#   PROBE=command        run once all sessions are created, with COORDINATOR_PID and STORE_DIR in
#                        its environment (to look at the process and the store's files then; its
#                        output goes to stderr).
#   Then the coordinator is stopped and started again on the same store, which resumes every
#   session passivated (memory per passivated session).
#
# Deltas against whole frames (COMPARE=deltas, one coordinator on STORE): EVENT_SESSIONS sessions
# created, then RATE events/s over them for SECONDS_EACH s with their WebSocket clients taking
# whole frames, then the same with deltas (`?deltas=1`, applied and acknowledged), ROUNDS times in
# turn (default 3); each run's coordinator CPU per accepted event (utime+stime over the run,
# streams' connections included) and POST → rendering p50/p99, the deltas' beside the whole
# frames' of the same round, then the medians over the rounds (the goal's row: a run with one
# stall of the machine moves its own round's p99, not the median).
#   COMPARE=deltas scripts/bench-sessions.sh
#
# Several coordinators (COORDINATORS=N > 1, spread mode: OPERATIONS, "Sessions spread over several
# coordinators"): a private PostgreSQL (initdb as user postgres, its data and unix socket in a
# temporary directory of its own), N coordinators on it, each with its own gateway (PORT, PORT+1,
# …), cluster endpoint, two workers, sessions.spread_lease_ms LEASE_MS and its gateway as
# advertised_url:
#   SESSIONS_PER_COORDINATOR=25000  sessions created on each coordinator.
#   EVENT_SESSIONS=1000  sessions per coordinator the events are spread over (at most
#                        SESSIONS_PER_COORDINATOR; all coordinators' in turn, each posted to its
#                        owner, each watched by a WebSocket client).
#   RATE=4000            events/s offered for SECONDS_EACH seconds over them; the baseline is the
#                        same load all to coordinator 1's shared root (in memory in spread mode).
#   LEASE_MS=1500        sessions.spread_lease_ms.
#   Then coordinator 1 is SIGKILLed and each of its sessions asked of another coordinator until
#   served again (taken over once its lease ran out); every session with events is then checked:
#   its counter equals the events answered 202 to it (each applied exactly once).
#
# Both modes:
#   CREATORS=48          clients creating sessions at once, each one after another over its own
#                        connection (the creation rate is the coordinator's, not one client's).
#   SECONDS_EACH=10      seconds each events run offers its load.
#   PORT=43500           the first coordinator's gateway port (the next ones follow; PostgreSQL's
#                        socket is numbered PORT too, no TCP).
#   BENCH_SCRATCH=.build the scratch path of the release build.
#   LOGS=DIR             the daemons' logs (warnings and errors) copied to DIR at the end.
# Memory is RSS growth (with one coordinator, that of the two create steps: not what the events run
# between them left, printed apart); the coordinator's is printed with the part of it that is anonymous (heap,
# allocator arenas, stacks: smaps_rollup) beside the file-backed or shared rest. CPU is
# utime+stime from /proc/PID/stat over 5 s, as % of one core. Workers get a capacity of every
# session of the run (at least the default 10,000), so that none refuses a session's child.
set -euo pipefail
cd "$(dirname "$0")/.."
COORDINATORS=${COORDINATORS:-1}
SESSIONS=${SESSIONS:-10000}
SESSIONS_PER_COORDINATOR=${SESSIONS_PER_COORDINATOR:-25000}
BASELINE_HELD=${BASELINE_HELD:-1000}
EVENT_SESSIONS=${EVENT_SESSIONS:-1000}
SECONDS_EACH=${SECONDS_EACH:-10}
PORT=${PORT:-43500}
STORE=${STORE:-sqlite}
SYNC=${SYNC:-}
BATCH=${BATCH:-}
LEASE_MS=${LEASE_MS:-1500}
if [[ -n ${CREATORS:-} ]]; then export SESSION_BENCH_CREATORS=$CREATORS; fi
if ((COORDINATORS > 1)); then
  RATE=${RATE:-4000}
  total_sessions=$((SESSIONS_PER_COORDINATOR * COORDINATORS))
  EVENT_SESSIONS=$((EVENT_SESSIONS < SESSIONS_PER_COORDINATOR ? EVENT_SESSIONS : SESSIONS_PER_COORDINATOR))
else
  RATE=${RATE:-1000}
  total_sessions=$SESSIONS
  if ((EVENT_SESSIONS > SESSIONS)); then echo "EVENT_SESSIONS ($EVENT_SESSIONS) > SESSIONS ($SESSIONS)" >&2; exit 2; fi
fi
scratch="${BENCH_SCRATCH:-.build}"
swift build -c release --scratch-path "$scratch" --product session-bench >&2
bin="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/session-bench"
dir=$(mktemp -d)
pids=()
postgres=
pg_dir=
cleanup() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [[ -n $postgres ]]; then
    kill -QUIT "$postgres" 2>/dev/null || true # immediate shutdown: the data is thrown away
    wait "$postgres" 2>/dev/null || true
  fi
  if [[ -n ${LOGS:-} ]]; then mkdir -p "$LOGS" && cp "$dir"/*.log "$LOGS"/ 2>/dev/null || true; fi
  rm -rf "$dir" ${pg_dir:+"$pg_dir"}
}
trap cleanup EXIT

# measure NAME COMMAND…: records what COMMAND prints (JSON) as the figure NAME of the table (one
# `NAME JSON` line each in $dir/figures); the script stops if COMMAND fails.
measure() {
  local value
  value=$("${@:2}")
  echo "$1 $value" >>"$dir/figures"
}
load() { SESSION_BENCH_ROLE=load "$bin" "$@"; }
settle() { sleep 3; }
gateway_url() { echo "http://127.0.0.1:$((PORT + $1))"; } # coordinator index (from 0)
rss() { awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$1/status"; }
# The coordinator's resident memory that is anonymous (its heap, stacks, the allocator's arenas),
# as /proc/PID/smaps_rollup counts it; the rest of its RSS is file-backed or shared mappings
# (the binary, libraries, SQLite's -shm wal-index).
anonymous() { awk '/^Anonymous:/ { print $2 * 1024 }' "/proc/$1/smaps_rollup"; }
# A process's CPU time so far (utime + stime, in clock ticks; the fields after the command's
# name in parentheses, which may hold spaces).
cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
# The CPU each of the PIDs used over the same 5 s, as % of one core: a JSON list.
cpu_percent() {
  local before=() pid start
  for pid in "$@"; do before+=("$(cpu_ticks "$pid")"); done
  start=$(date +%s.%N)
  sleep 5
  local after=() i
  for pid in "$@"; do after+=("$(cpu_ticks "$pid")"); done
  python3 -c 'import sys, json, time, os
start, ticks, n = float(sys.argv[1]), os.sysconf("SC_CLK_TCK"), (len(sys.argv) - 2) // 2
wall = time.time() - start
print(json.dumps([100 * (int(a) - int(b)) / ticks / wall for b, a in zip(sys.argv[2:2 + n], sys.argv[2 + n:])]))' \
    "$start" "${before[@]}" "${after[@]}"
}

# write_config FILE INDEX STORE_JSON [SESSIONS_JSON]: coordinator INDEX's configuration (its
# endpoint, its gateway at PORT+INDEX, its two workers; SESSIONS_JSON: more keys of "sessions").
write_config() {
  local capacity=$((total_sessions > 10000 ? total_sessions : 10000))
  cat >"$1" <<JSON
{ "coordinator": { "endpoint": "ipc://$dir/coordinator-$2", "root": "board" },
  "workers": [ { "name": "w1", "pool": "bench", "capacity": $capacity }, { "name": "w2", "pool": "bench", "capacity": $capacity } ],
  "placement": [ { "match": "*CounterWorkflow", "pool": "bench" } ],
  "log": { "level": "warning", "format": "text" },
  "gateway": { "listen": "127.0.0.1:$((PORT + $2))", "max_connections": 4096 },
  "store": $3,
  "sessions": { "enabled": true, "idle_timeout_ms": 3600000, "max_sessions": $((total_sessions * 2)),
                "max_creations_per_second": 100000${4:+, $4} } }
JSON
}
# start_coordinator CONFIG LOG_NAME: sets $coordinator.
start_coordinator() {
  "$bin" --config "$1" 2>"$dir/$2.log" >/dev/null &
  coordinator=$!
  pids+=("$coordinator")
}
# start_workers CONFIG INDEX: its two workers; their pids are added to $workers.
start_workers() {
  local name
  for name in w1 w2; do
    SESSION_BENCH_ROLE=worker "$bin" --config "$1" --name "$name" 2>"$dir/$name-$2.log" >/dev/null &
    pids+=("$!")
    workers+=("$!")
  done
}
# wait_ready URL [workers]: until the shared root shows its remote child and, with "workers", until
# both workers joined. (Not "workers" after a restart on the store: the tree lists every session,
# and that answer would count in the memory measured next.)
wait_ready() {
  for _ in $(seq 600); do
    if { [[ ${2:-} != workers ]] || curl -sf "$1/api/tree" | python3 -c '
import json, sys
tree = json.load(sys.stdin)
sys.exit(0 if len([w for w in tree.get("workers", []) if w.get("lastHeardMillisecondsAgo") is not None]) == 2 else 1)' 2>/dev/null; } &&
      curl -sf "$1/api/rendering" | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["rendering"]["c"]["count"] >= 0 else 1)' 2>/dev/null; then
      return 0
    fi
    sleep 0.2
  done
  echo "the cluster at $1 did not become ready; the coordinators' logs:" >&2
  cat "$dir"/coordinator*.log >&2
  exit 1
}
# The sum of the RSS of the PIDs.
rss_sum() {
  local sum=0 pid
  for pid in "$@"; do sum=$((sum + $(rss "$pid"))); done
  echo "$sum"
}
# A JSON list of the RSS of each PID.
rss_list() {
  local pid list=()
  for pid in "$@"; do list+=("$(rss "$pid")"); done
  (IFS=,; echo "[${list[*]}]")
}
# The sessions the coordinator at URL lists, and how many of them are passivated: [ALL, PASSIVATED].
listed_sessions() {
  curl -sf "$1/api/sessions" |
    python3 -c 'import json,sys; s=json.load(sys.stdin)["sessions"]; print(json.dumps([len(s), sum(1 for x in s if x["state"] == "passivated")]))'
}
# A private PostgreSQL server (Debian's initdb and postgres, as PrivatePostgres does: as the
# postgres user when run as root; its data directory and unix socket in a temporary directory of
# its own, no TCP). Sets $postgres (its pid) and $pg_url.
start_postgres() {
  local binaries run=()
  binaries=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [[ -x $binaries/postgres ]] || { echo "no PostgreSQL server in /usr/lib/postgresql/*/bin (apt-get install postgresql)" >&2; exit 1; }
  pg_dir=$(mktemp -d)
  if [[ $(id -u) == 0 ]]; then
    chown postgres "$pg_dir"
    run=(setpriv --reuid=postgres --regid=postgres --init-groups --)
  fi
  LC_ALL=C "${run[@]}" "$binaries/initdb" -D "$pg_dir/data" -A trust -U postgres --no-sync --no-instructions >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  LC_ALL=C "${run[@]}" "$binaries/postgres" -D "$pg_dir/data" -k "$pg_dir" -p "$PORT" -h '' -c max_connections=100 2>"$dir/postgres.log" &
  postgres=$!
  for _ in $(seq 300); do
    grep -q "ready to accept connections" "$dir/postgres.log" && break
    sleep 0.1
  done
  grep -q "ready to accept connections" "$dir/postgres.log" || { cat "$dir/postgres.log" >&2; exit 1; }
  pg_url="postgres://postgres@/postgres?host=$pg_dir&port=$PORT"
}

# The "store" section of one coordinator's configuration (STORE, SYNC, BATCH).
store_json() {
  if [[ $STORE == none ]]; then echo '{ "kind": "none" }'; return; fi
  echo "{ \"kind\": \"$STORE\", \"path\": \"store.sqlite\"${SYNC:+, \"sync\": \"$SYNC\"}${BATCH:+, \"max_commit_batch\": $BATCH} }"
}

# One coordinator (its store as STORE says) and its workers, ready at the gateway URL $1.
start_one_coordinator() {
  write_config "$dir/cluster.json" 0 "$(store_json)"
  start_coordinator "$dir/cluster.json" coordinator
  workers=()
  start_workers "$dir/cluster.json" 0
  wait_ready "$1" workers
}

# One coordinator on SQLite (or no store): the sessions created in two steps around the baseline
# events, the events with all held and to the shared root, then a restart on the store.
one_coordinator() {
  local url first
  url=$(gateway_url 0)
  start_one_coordinator "$url"
  settle
  measure idle rss "$coordinator"
  measure idle_anonymous anonymous "$coordinator"
  measure workers_idle rss_sum "${workers[@]}"
  measure idle_cpu cpu_percent "$coordinator"

  first=$((BASELINE_HELD > EVENT_SESSIONS ? BASELINE_HELD : EVENT_SESSIONS))
  first=$((first < SESSIONS ? first : SESSIONS))
  measure baseline_held echo "$first"
  measure created_first with_cpu load create "$url" "$first" "$dir/ids" "$SESSIONS"
  settle
  measure before_held_events rss "$coordinator"
  measure before_held_events_anonymous anonymous "$coordinator"
  measure held with_cpu load events "$dir/ids" "$EVENT_SESSIONS" "$RATE" "$SECONDS_EACH"
  measure after_held_events rss "$coordinator"
  measure after_held_events_anonymous anonymous "$coordinator"
  measure created_rest with_cpu load create "$url" $((SESSIONS - first)) "$dir/ids" "$SESSIONS"
  settle
  measure active rss "$coordinator"
  measure active_anonymous anonymous "$coordinator"
  measure active_cpu cpu_percent "$coordinator"
  if [[ -n ${PROBE:-} ]]; then COORDINATOR_PID=$coordinator STORE_DIR=$dir bash -c "$PROBE" >&2; fi
  measure workers_active rss_sum "${workers[@]}"

  measure spread with_cpu load events "$dir/ids" "$EVENT_SESSIONS" "$RATE" "$SECONDS_EACH"
  measure shared with_cpu load shared "$url" "$RATE" "$SECONDS_EACH"

  # A coordinator started again on the same store resumes every session passivated.
  kill -TERM "$coordinator"
  local status=0
  wait "$coordinator" || status=$?
  # A graceful stop exits 0; anything else is a defect to report, not to hide (its log is gone
  # with the run's directory: see docs/OPERATIONS.md on a coordinator's shutdown).
  if ((status != 0)); then echo "bench-sessions: the coordinator exited $status on SIGTERM, not 0" >&2; fi
  start_coordinator "$dir/cluster.json" coordinator-resumed
  wait_ready "$url"
  settle
  measure passivated rss "$coordinator"
  measure listed listed_sessions "$url"
}

# with_cpu COMMAND…: COMMAND's JSON summary with the coordinator's CPU seconds over it
# ("cpu_seconds": utime+stime, every thread of it).
with_cpu() {
  local before after result
  before=$(cpu_ticks "$coordinator")
  result=$("$@")
  after=$(cpu_ticks "$coordinator")
  python3 -c 'import json, os, sys
result = json.loads(sys.argv[1])
result["cpu_seconds"] = (int(sys.argv[3]) - int(sys.argv[2])) / os.sysconf("SC_CLK_TCK")
print(json.dumps(result))' "$result" "$before" "$after"
}

# events_cpu whole|deltas: one events run over the first EVENT_SESSIONS sessions, their streams
# taking whole frames or deltas; its summary with the coordinator's CPU seconds over it.
events_cpu() {
  SESSION_BENCH_DELTAS=$([[ $1 == deltas ]] && echo 1 || echo 0) with_cpu load events "$dir/ids" "$EVENT_SESSIONS" "$RATE" "$SECONDS_EACH"
}

# COMPARE=deltas: the same events with whole frames and with deltas, twice in turn.
compare_deltas() {
  local url round
  url=$(gateway_url 0)
  start_one_coordinator "$url"
  load create "$url" "$EVENT_SESSIONS" "$dir/ids" "$EVENT_SESSIONS" >/dev/null
  settle
  for ((round = 1; round <= ${ROUNDS:-3}; round++)); do
    measure "whole_$round" events_cpu whole
    measure "deltas_$round" events_cpu deltas
  done
}

# COORDINATORS coordinators spreading sessions on a private PostgreSQL: sessions created on each,
# events over all of them, coordinator 1 SIGKILLed and its sessions taken over by the others.
spread_coordinators() {
  local index url coordinators=() urls=() heads=()
  start_postgres
  workers=()
  for ((index = 0; index < COORDINATORS; index++)); do
    url=$(gateway_url "$index")
    urls+=("$url")
    write_config "$dir/cluster-$index.json" "$index" "{ \"kind\": \"postgres\", \"url\": \"$pg_url\" }" \
      "\"spread_lease_ms\": $LEASE_MS, \"advertised_url\": \"$url\""
    start_coordinator "$dir/cluster-$index.json" "coordinator-$index"
    coordinators+=("$coordinator")
    start_workers "$dir/cluster-$index.json" "$index"
  done
  for url in "${urls[@]}"; do wait_ready "$url" workers; done
  settle
  measure idle rss_list "${coordinators[@]}"
  measure idle_cpu cpu_percent "${coordinators[@]}"
  for ((index = 0; index < COORDINATORS; index++)); do
    measure "created_$index" load create "${urls[$index]}" "$SESSIONS_PER_COORDINATOR" "$dir/ids-$index"
    head -n "$EVENT_SESSIONS" "$dir/ids-$index" >"$dir/head-$index"
    heads+=("$dir/head-$index")
  done
  settle
  measure active rss_list "${coordinators[@]}"
  measure active_cpu cpu_percent "${coordinators[@]}"
  # The events' sessions: each coordinator's first EVENT_SESSIONS, in turn.
  paste -d '\n' "${heads[@]}" >"$dir/event-ids"
  cat "$dir"/ids-* >"$dir/all-ids"
  measure spread load events "$dir/event-ids" $((EVENT_SESSIONS * COORDINATORS)) "$RATE" "$SECONDS_EACH" "$dir/accepted"
  measure shared load shared "${urls[0]}" "$RATE" "$SECONDS_EACH"
  measure takeover load takeover "${coordinators[0]}" "${urls[0]}" "$dir/all-ids" "$dir/accepted"
  wait "${coordinators[0]}" 2>/dev/null || true
}

if [[ ${COMPARE:-} == deltas ]]; then compare_deltas; elif ((COORDINATORS > 1)); then spread_coordinators; else one_coordinator; fi

python3 - "$dir/figures" "$COORDINATORS" "$RATE" "$EVENT_SESSIONS" "$LEASE_MS" "${COMPARE:-}" <<'PY'
import json, os, statistics, sys
figures = {name: json.loads(value) for name, value in (line.rstrip("\n").split(" ", 1) for line in open(sys.argv[1]))}
coordinators, rate, event_sessions, lease_ms = map(int, sys.argv[2:6])
compare = sys.argv[6]
kib = lambda b: f"{b / 1024:.1f} KiB"
mib = lambda b: f"{b / 1048576:.1f} MiB"
ms = lambda v: f"{v:.1f} ms"
per_s = lambda v: f"{v:,.0f}/s"
rows = []
def row(figure, value, baseline, goal, met):
    rows.append((figure, value, baseline, goal, "-" if met is None else ("yes" if met else "NO")))

def event_rows(spread, shared, sessions, baselines=""):
    """The events rows: accepted/s and POST → rendering, against the shared root of the same run."""
    row(f"events accepted/s over {sessions:,} sessions ({rate:,}/s offered)", per_s(spread["accepted_per_second"]),
        f"shared root {per_s(shared['accepted_per_second'])}{baselines}", f"{rate:,}/s",
        spread["accepted_per_second"] >= 0.98 * rate and spread["refused"] == 0)
    row("POST → session's WebSocket rendering, p50", ms(spread["p50_ms"]), f"shared root {ms(shared['p50_ms'])}", "(report)", None)
    row("POST → session's WebSocket rendering, p99", ms(spread["p99_ms"]), f"shared root {ms(shared['p99_ms'])}", "≤ 20 ms",
        0 <= spread["p99_ms"] <= 20 and spread["not_shown"] == 0)
    row("POST → session's WebSocket rendering, max", ms(spread["max_ms"]), f"shared root {ms(shared['max_ms'])}", "(report)", None)

def tenth_rates(steps):
    """Sessions/s per tenth of the run's sessions, the create steps' parts added up."""
    tenths = [[0, 0.0] for _ in range(10)]
    for step in steps:
        for tenth, (sessions, seconds) in zip(tenths, step["tenths"]):
            tenth[0] += sessions
            tenth[1] += seconds
    return [(sessions, sessions / seconds if seconds > 0 else 0.0) for sessions, seconds in tenths]

def creation_rows(steps, total):
    rates = tenth_rates(steps)
    print("creation rate per 10 % of the sessions: " + ", ".join(f"{10 * i}–{10 * i + 10} % {per_s(r)}" for i, (_, r) in enumerate(rates)))
    created = sum(s["created"] for s in steps)
    seconds = sum(sum(t[1] for t in s["tenths"]) for s in steps)
    first, last, slowest = rates[0][1], rates[9][1], min(r for _, r in rates)
    row("creation rate, first 10 % of the sessions", per_s(first), "-", "≥ 2,000/s", first >= 2000)
    row("creation rate, last 10 % of the sessions", per_s(last), f"first 10 % {per_s(first)}", "≥ 2,000/s and ≥ 0.8× first 10 %",
        last >= 2000 and last >= 0.8 * first)
    creators = "/".join(sorted({str(s["clients"]) for s in steps}))
    row(f"creation rate, all {created:,}, {creators} clients at once (slowest tenth {per_s(slowest)})", per_s(created / seconds if seconds else 0),
        f"first 10 % {per_s(first)}", "≥ 2,000/s from start to end", slowest >= 2000 and created == total)

if compare == "deltas":
    f = figures
    per_event = lambda run: run["cpu_seconds"] / max(1, run["accepted"]) * 1e6
    runs = []
    rounds = sorted(int(key.split("_")[1]) for key in f if key.startswith("whole_"))
    for r in rounds:
        whole, deltas = f[f"whole_{r}"], f[f"deltas_{r}"]
        row(f"round {r}: events accepted/s over {event_sessions:,} sessions ({rate:,}/s offered)", per_s(deltas["accepted_per_second"]),
            f"whole frames {per_s(whole['accepted_per_second'])}", f"{rate:,}/s", deltas["accepted_per_second"] >= 0.98 * rate and deltas["refused"] == 0)
        row(f"round {r}: coordinator CPU per event, deltas", f"{per_event(deltas):.0f} µs", f"whole frames {per_event(whole):.0f} µs", "(report)", None)
        row(f"round {r}: POST → WebSocket rendering p50, deltas", ms(deltas["p50_ms"]), f"whole frames {ms(whole['p50_ms'])}", "(report)", None)
        row(f"round {r}: POST → WebSocket rendering p99, deltas", ms(deltas["p99_ms"]), f"whole frames {ms(whole['p99_ms'])}",
            "(report)", None)
        runs += [(f"whole {r}", whole), (f"deltas {r}", deltas)]
    median = lambda kind, key: statistics.median(f[f"{kind}_{r}"][key] for r in rounds)
    median_cpu = lambda kind: statistics.median(per_event(f[f"{kind}_{r}"]) for r in rounds)
    row(f"median of {len(rounds)} rounds: coordinator CPU per event, deltas", f"{median_cpu('deltas'):.0f} µs",
        f"whole frames {median_cpu('whole'):.0f} µs", "(report)", None)
    row(f"median of {len(rounds)} rounds: POST → WebSocket rendering p50, deltas", ms(median("deltas", "p50_ms")),
        f"whole frames {ms(median('whole', 'p50_ms'))}", "(report)", None)
    row(f"median of {len(rounds)} rounds: POST → WebSocket rendering p99, deltas", ms(median("deltas", "p99_ms")),
        f"whole frames {ms(median('whole', 'p99_ms'))}", "≤ whole frames'",
        median("deltas", "p99_ms") <= median("whole", "p99_ms") and all(f[f"deltas_{r}"]["not_shown"] == 0 for r in rounds))
elif coordinators == 1:
    f = figures
    sessions = f["created_first"]["created"] + f["created_rest"]["created"]
    held = f["baseline_held"]
    spread, shared, at_held = f["spread"], f["shared"], f["held"]
    rendered = f["created_first"]["all_rendered_seconds"] + f["created_rest"]["all_rendered_seconds"]
    row(f"{sessions:,} active sessions (root + 1 remote child each)", f"{sessions:,} in {rendered:.0f} s", "-",
        f"{sessions:,} on 1 coordinator + 2 workers", True)
    creation_rows([f["created_first"], f["created_rest"]], sessions)
    # What creating the sessions added: the RSS growth of the two create steps, not what the
    # events run between them left (reported apart).
    grown = lambda kind: (f[f"before_held_events{kind}"] - f[f"idle{kind}"]) + (f[f"active{kind}"] - f[f"after_held_events{kind}"])
    per_active = grown("") / sessions
    row("coordinator memory per active session", kib(per_active), f"idle coordinator {mib(f['idle'])}", "≤ 16 KiB", per_active <= 16 * 1024)
    per_anonymous = grown("_anonymous") / sessions
    row("  of which anonymous (smaps_rollup: heap, arenas, stacks)", kib(per_anonymous), f"idle coordinator {mib(f['idle_anonymous'])}", "(report)", None)
    row("  of which file-backed or shared (RSS minus anonymous)", kib(per_active - per_anonymous),
        f"idle coordinator {mib(f['idle'] - f['idle_anonymous'])}", "(report)", None)
    row(f"not counted above: RSS the events run with {held:,} held left", mib(f["after_held_events"] - f["before_held_events"]),
        f"RSS before it {mib(f['before_held_events'])}", "(report)", None)
    row("workers' memory per remote child (both)", kib((f["workers_active"] - f["workers_idle"]) / sessions),
        f"idle workers {mib(f['workers_idle'])}", "(report)", None)
    listed_all, listed_passivated = f["listed"]
    per_passivated = (f["passivated"] - f["idle"]) / sessions
    if listed_all:
        row(f"coordinator memory per passivated session ({listed_passivated:,} resumed from SQLite)", f"{per_passivated:.0f} B",
            f"idle coordinator {mib(f['idle'])}", "≤ 1 KiB", per_passivated <= 1024 and listed_passivated == sessions)
    else:
        row("coordinator memory per passivated session", "- (no store)", "-", "≤ 1 KiB", None)
    idle_cpu, active_cpu = f["idle_cpu"][0], f["active_cpu"][0]
    row(f"coordinator CPU with all {sessions:,} sessions idle (5 s, % of one core)", f"{active_cpu:.1f} %",
        f"idle coordinator, no session {idle_cpu:.1f} %", "< 3 %", active_cpu < 3)
    event_rows(spread, shared, event_sessions, f"; {held:,} held {per_s(at_held['accepted_per_second'])}")
    row(f"p99 with {sessions:,} held vs {held:,} held", ms(spread["p99_ms"]), f"{held:,} held {ms(at_held['p99_ms'])}",
        "≤ 20 ms and ≤ 1.2× the baseline", 0 <= spread["p99_ms"] <= 20 and spread["p99_ms"] <= 1.2 * at_held["p99_ms"])
    # What the coordinator spends (utime+stime, all its threads) on one session created or one
    # event: the figures a change to its paths moves, less noisy than rates on a shared machine.
    per = lambda run, count: f"{run['cpu_seconds'] / max(1, count) * 1e6:.0f} µs"
    row(f"coordinator CPU per session created, the last {f['created_rest']['created']:,}", per(f["created_rest"], f["created_rest"]["created"]),
        f"the first {f['created_first']['created']:,}: {per(f['created_first'], f['created_first']['created'])}", "(report)", None)
    row(f"coordinator CPU per event with {sessions:,} held", per(spread, spread["accepted"]),
        f"{held:,} held {per(at_held, at_held['accepted'])}; shared root {per(shared, shared['accepted'])}", "(report)", None)
    runs = (("sessions", spread), (f"{held} held", at_held), ("shared root", shared))
else:
    f = figures
    created = [f[f"created_{i}"] for i in range(coordinators)]
    sessions = sum(c["created"] for c in created)
    per_coordinator = sessions // coordinators
    spread, shared, takeover = f["spread"], f["shared"], f["takeover"]
    row(f"{sessions:,} active sessions over {coordinators} coordinators (root + 1 remote child each)",
        f"{sessions:,}, each coordinator's rendered in {max(c['all_rendered_seconds'] for c in created):.0f} s or less", "-",
        f"{per_coordinator:,} on each of {coordinators} coordinators + 2 workers each", sessions == per_coordinator * coordinators)
    rates = [c["created"] / c["create_seconds"] for c in created]
    row("creation rate on each coordinator (in turn)", " / ".join(per_s(r) for r in rates), "-", "≥ 2,000/s", min(rates) >= 2000)
    per_session = [(a - i) / c["created"] for a, i, c in zip(f["active"], f["idle"], created)]
    average = sum(per_session) / coordinators
    row("coordinator memory per active session (averaged over the coordinators)", kib(average),
        f"idle coordinators {mib(sum(f['idle']) / coordinators)} each", "≤ 16 KiB", average <= 16 * 1024)
    row("  per coordinator", " / ".join(kib(p) for p in per_session), "-", "(report)", None)
    idle_cpu, active_cpu = sum(f["idle_cpu"]) / coordinators, sum(f["active_cpu"]) / coordinators
    row("coordinator CPU with all sessions idle (5 s, % of one core, averaged)", f"{active_cpu:.1f} %",
        f"idle coordinators, no session {idle_cpu:.1f} %", "< 3 %", active_cpu < 3)
    event_rows(spread, shared, event_sessions * coordinators, " (coordinator 1's, in memory)")
    row(f"coordinator 1 SIGKILLed: all its {takeover['orphans']:,} sessions served again by the other {takeover['survivors']}",
        f"{takeover['all_served_seconds']:.1f} s after the kill", f"session lease {lease_ms:,} ms; first served after {takeover['first_served_seconds']:.1f} s",
        "(report)", None)
    row("  half of them served again by", f"{takeover['p50_served_seconds']:.1f} s", "-", "(report)", None)
    exact = takeover["mismatched"] == 0 and takeover["checked"] > 0 and takeover["orphans"] == per_coordinator
    row(f"accepted events applied exactly once ({takeover['checked']:,} sessions checked)",
        f"{takeover['applied']:,} applied, {takeover['accepted']:,} answered 202; {takeover['mismatched']} sessions differ",
        f"{takeover['in_doubt']} in doubt (not answered 202), {takeover['in_doubt_applied']} sessions applied theirs", "every counter = its 202s", exact)
    if takeover["first_mismatch"]: print(f"first mismatch: {takeover['first_mismatch']}")
    runs = (("sessions", spread), ("shared root", shared), ("takeover", takeover))
load = os.getloadavg()
print(f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end")
widths = [max(len(str(r[i])) for r in rows + [("figure", "value", "baseline", "goal", "met?")]) for i in range(5)]
line = lambda r: "| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |"
print(line(("figure", "value", "baseline", "goal", "met?")))
print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
for r in rows: print(line(r))
for name, result in runs:
    print(f"{name}: {json.dumps(result, sort_keys=True)}")
PY
