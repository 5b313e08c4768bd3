#!/usr/bin/env bash
# Runs a local workflow cluster in the background: one coordinator and the workers the config lists.
#
#   scripts/cluster.sh up     [CONFIG]   build if needed, start everything, wait until every worker joined
#   scripts/cluster.sh down   [CONFIG]   SIGTERM every daemon (workers first), SIGKILL after a bound
#   scripts/cluster.sh status [CONFIG]   which daemons run, then the tree from the gateway's /api/tree (the
#                                        workers, each remote child's status), the latest screen; exits 1
#                                        when a daemon or a listed worker is not running
#   scripts/cluster.sh logs   [CONFIG]   the end of every daemon's log
#
# The daemons are the email browser's (the package Examples/EmailBrowser). CONFIG defaults to
# Config/local-cluster.json (CURVE on loopback tcp; `up` creates the missing keys in Config/keys/
# with `workflow-coordinator keygen --config`, gitignored). Pid files and logs go to $RUN_DIR
# (default run/, gitignored); the binaries come from $BIN_DIR (default $SCRATCH_PATH/debug,
# SCRATCH_PATH default Examples/EmailBrowser/.build), built first if missing or stale unless
# SKIP_BUILD=1.
set -euo pipefail
cd "$(dirname "$0")/.."

COMMAND=${1:-status}
CONFIG=${2:-Config/local-cluster.json}
RUN_DIR=${RUN_DIR:-run}
SCRATCH_PATH=${SCRATCH_PATH:-Examples/EmailBrowser/.build}
APP=Examples/EmailBrowser
BIN=${BIN_DIR:-$SCRATCH_PATH/debug}
READY_TIMEOUT=${READY_TIMEOUT:-60}   # seconds to wait for the workers to join
STOP_TIMEOUT=${STOP_TIMEOUT:-15}     # seconds between SIGTERM and SIGKILL

build_if_needed() {
  [[ ${SKIP_BUILD:-} == 1 ]] && return 0
  local stale=""
  for product in workflow-coordinator workflow-worker; do
    if [[ ! -x "$BIN/$product" ]] || [[ -n $(find Sources Package.swift "$APP/Sources" "$APP/Package.swift" -newer "$BIN/$product" -print -quit 2>/dev/null) ]]; then
      stale=yes
    fi
  done
  if [[ -n $stale ]]; then
    scripts/install-deps.sh
    echo "building the daemons..." >&2
    swift build --package-path "$APP" --scratch-path "$SCRATCH_PATH" --product workflow-coordinator >&2
    swift build --package-path "$APP" --scratch-path "$SCRATCH_PATH" --product workflow-worker >&2
  fi
}

# Whether process $1 exists and is not a zombie (an exited daemon whose reaper has not run yet).
running() {
  local state
  state=$(sed -E 's/.*\) (.).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $state && $state != Z && $state != X ]]
}

# Whether the pid in pid file $1 is alive and is one of our daemons (not a recycled pid).
alive() {
  local pidfile=$1 pid
  [[ -f $pidfile ]] || return 1
  pid=$(cat "$pidfile")
  running "$pid" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "workflow-" || return 1
}

start_daemon() { # name, then the command line
  local name=$1; shift
  (
    # Close every inherited descriptor above stderr: a daemon must not hold its launcher's pipes
    # open (a caller reading `cluster.sh up | tee` or a CI step would otherwise never see EOF).
    for fd in /proc/self/fd/*; do
      fd=${fd##*/}
      if ((fd > 2)); then eval "exec $fd>&-" 2>/dev/null || true; fi
    done
    exec nohup "$@" >"$RUN_DIR/$name.out" 2>"$RUN_DIR/$name.log" </dev/null
  ) &
  echo $! >"$RUN_DIR/$name.pid"
}

stop_daemon() { # name
  local pidfile="$RUN_DIR/$1.pid" pid
  if alive "$pidfile"; then
    pid=$(cat "$pidfile")
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + STOP_TIMEOUT))
    while running "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
    if running "$pid"; then
      echo "$1 did not stop within ${STOP_TIMEOUT}s: SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
    echo "stopped $1 (pid $pid)"
  fi
  rm -f "$pidfile"
}

workers() { "$BIN/workflow-coordinator" --config "$CONFIG" --list-workers; }

up() {
  build_if_needed
  mkdir -p "$RUN_DIR"
  if alive "$RUN_DIR/coordinator.pid"; then
    echo "the cluster is already up (coordinator pid $(cat "$RUN_DIR/coordinator.pid")); run: $0 down" >&2
    exit 1
  fi
  local names
  names=$(workers) # validates the config before anything starts
  # The cluster's CURVE keys (used when the config's security is CURVE, the default on tcp):
  # keygen creates only what is missing, so existing keys are kept across runs.
  "$BIN/workflow-coordinator" keygen --config "$CONFIG" >"$RUN_DIR/keygen.out"
  start_daemon coordinator "$BIN/workflow-coordinator" --config "$CONFIG" --print-renderings text
  for name in $names; do
    start_daemon "$name" "$BIN/workflow-worker" --config "$CONFIG" --name "$name"
  done
  local expected
  expected=$(echo "$names" | grep -c . || true)
  local deadline=$((SECONDS + READY_TIMEOUT)) joined=0
  while ((SECONDS < deadline)); do
    joined=$(grep -c "worker joined" "$RUN_DIR/coordinator.log" 2>/dev/null || true)
    ((joined >= expected)) && break
    if ! alive "$RUN_DIR/coordinator.pid"; then
      echo "the coordinator exited:" >&2
      tail -n 20 "$RUN_DIR/coordinator.log" >&2
      down
      exit 1
    fi
    sleep 0.2
  done
  if ((joined < expected)); then
    echo "only $joined of $expected workers joined within ${READY_TIMEOUT}s; see $0 logs" >&2
    down
    exit 1
  fi
  echo "cluster up: coordinator + $expected workers ($(echo $names | tr '\n' ' '))"
  status
}

down() {
  mkdir -p "$RUN_DIR"
  local pidfile name
  for pidfile in "$RUN_DIR"/*.pid; do
    [[ -e $pidfile ]] || continue
    name=$(basename "$pidfile" .pid)
    [[ $name == coordinator ]] || stop_daemon "$name"
  done
  stop_daemon coordinator
}

# The gateway's address, from the coordinator's log line `gateway listening url=…` (a port of 0
# in the config is resolved there), and its bearer token file from the config, if any.
gateway_url() {
  grep -o 'gateway listening url=[^ ]*' "$RUN_DIR/coordinator.log" 2>/dev/null | tail -n 1 | sed 's/.*url=//'
}

status() {
  local pidfile name any="" failed=0
  for pidfile in "$RUN_DIR"/*.pid; do
    [[ -e $pidfile ]] || continue
    any=yes
    name=$(basename "$pidfile" .pid)
    if alive "$pidfile"; then echo "$name: running (pid $(cat "$pidfile"))"; else echo "$name: NOT running (stale pid file)"; failed=1; fi
  done
  [[ -n $any ]] || { echo "no daemons (the cluster is down)"; return 0; }
  local url
  url=$(gateway_url)
  if [[ -z $url ]]; then
    echo "no gateway in the coordinator's log (is gateway.listen set in $CONFIG?): cannot read the tree" >&2
    return 1
  fi
  # The tree as the coordinator sees it now (GET /api/tree); exits 1 when a listed worker is not
  # connected or the gateway does not answer.
  python3 - "$url" "$CONFIG" <<'PY' || failed=1
import json, os, sys, urllib.request
url, config_path = sys.argv[1], sys.argv[2]
config = json.load(open(config_path))
request = urllib.request.Request(url + "/api/tree")
token_file = config.get("gateway", {}).get("bearer_token_file")
if token_file:
    path = token_file if token_file.startswith("/") else os.path.join(os.path.dirname(config_path), token_file)
    request.add_header("Authorization", "Bearer " + open(path).readline().strip())
try:
    tree = json.load(urllib.request.urlopen(request, timeout=10))
except Exception as error:
    print(f"the gateway at {url} does not answer: {error}", file=sys.stderr)
    sys.exit(1)
root = tree["root"]
print(f"gateway: {url}/ (inspector: {url}/inspector)")
print(f"root {root['name']} on the coordinator (pid {root['runsOn']['pid']}), rendering #{root['renderingSequence']}")
print("workers:")
for w in tree["workers"]:
    draining = ", DRAINING (its children are moving)" if w.get('draining') else ""
    print(f"  {w['name']}: pool {w['pool']}, load {w['load']}/{w['capacity']}, heard {w['lastHeardMillisecondsAgo']:.0f} ms ago, joined {w['joinedAt']}{draining}")
for name in tree["missingWorkers"]:
    print(f"  {name}: NOT connected")
print("tree (below the root):")
for n in tree["nodes"]:
    indent = "  " * n["depth"]
    if n["placement"] == "local":
        print(f"{indent}{n['path']}: local, on the coordinator")
        continue
    where = n["runsOn"]["process"] if n.get("runsOn") else "nowhere"
    detail = f" ({n['detail']})" if n["detail"] and n["status"] != "running" else ""
    print(f"{indent}{n['path']}: {n['status']} on {where}{detail}; events {n['events']['sent']} sent, {n['events']['outstanding']} outstanding")
sys.exit(1 if tree["missingWorkers"] else 0)
PY
  if [[ -s "$RUN_DIR/coordinator.out" ]]; then
    echo "latest screen (each pane names the process that rendered it):"
    # A text frame runs from a line starting "+-- " to a line that is exactly "+--".
    awk '!grab && /^\+-- / { buf = ""; grab = 1 } grab { buf = buf "  " $0 "\n" } grab && /^\+--$/ { grab = 0; last = buf }
         END { printf "%s", last }' "$RUN_DIR/coordinator.out"
  fi
  return $failed
}

logs() {
  local log
  for log in "$RUN_DIR"/*.log; do
    [[ -e $log ]] || continue
    echo "==> $log <=="
    tail -n 40 "$log"
  done
}

case $COMMAND in
  up) up ;;
  down) down ;;
  status) status ;;
  logs) logs ;;
  *) echo "usage: $0 up|down|status|logs [CONFIG]" >&2; exit 2 ;;
esac
