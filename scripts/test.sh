#!/usr/bin/env bash
# Runs every unit and integration test, then the example applications' (Examples/*). Works on a
# fresh machine: installs libzmq (and chromium and haproxy, for the browser tests, and postgresql, for
# the PostgreSQL store's tests) first. Arguments (e.g. --filter X) run only those tests of the main
# package.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Installs Debian's package $2 when the file or command $1 is missing; $3 says which tests need
# it. Without it those tests are skipped, saying why.
install_for_tests() {
  if command -v "$1" >/dev/null 2>&1 || ls $1 >/dev/null 2>&1; then return; fi
  local sudo=""
  if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
  echo "installing $2 for $3..." >&2
  if ! ($sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$2" >/dev/null); then
    echo "$2 could not be installed here: $3 will be skipped" >&2
  fi
}
# The browser tests drive headless Chromium (Debian's `chromium`); the standby takeover's browser
# test puts a real load balancer (`haproxy`) in front of the coordinators' gateways.
install_for_tests chromium chromium "the browser tests"
install_for_tests /usr/sbin/haproxy haproxy "the browser test of a standby's takeover"
# The PostgreSQL store's tests start a private server of their own (Debian's `postgresql`: initdb
# and postgres, run as the `postgres` user the package creates); the package's own cluster is not
# used (POSTGRES_TESTS=off skips them).
install_for_tests "/usr/lib/postgresql/*/bin/initdb" postgresql "the PostgreSQL store's tests"
# The TLS tests of the PostgreSQL store make a CA and a server certificate with `openssl`.
install_for_tests /usr/bin/openssl openssl "the PostgreSQL store's TLS tests"
# The tracing test's OTLP receiver is a Python script of the standard library.
install_for_tests python3 python3 "the tracing test across processes"
# The network lab's tools; its tests (suite "Network lab") skip themselves, saying why, when a lab
# cannot be made here (not root, no nftables, NETLAB=off).
scripts/netlab.sh install || echo "network lab: iproute2/nftables could not be installed" >&2
if reason=$(scripts/netlab.sh check); then
  echo "network lab: available; its tests run"
else
  echo "network lab: unavailable ($reason); its tests will be skipped"
fi
# A test process that crashes runs none of its cleanup: a private PostgreSQL server it started
# (data directory /tmp/wf-pg-<test pid>-<random>) would serve on for nobody. On exit, whatever
# happened, such servers of test processes that are gone are stopped and their directories
# removed, saying so (a crash is a failure to look into, not to hide).
sweep_orphaned_postgres() {
  local dir owner
  for dir in /tmp/wf-pg-*; do
    [[ -d $dir ]] || continue
    owner=${dir#/tmp/wf-pg-}
    owner=${owner%%-*}
    kill -0 "$owner" 2>/dev/null && continue
    echo "test.sh: a private PostgreSQL server of test process $owner (gone) was left in $dir; stopping it" >&2
    pkill -KILL -f -- "-D $dir/data" 2>/dev/null || true
    rm -rf "$dir"
  done
}
# A test's files are named /tmp/wf-<what>-<test pid>-…: a ZeroMQ socket's ipc file is left behind
# when its process ends before libzmq closed it (a runtime still lingering on messages for a
# worker the test stopped, a killed process), a fixture's directory when its process crashed.
# Those of test processes that are gone are removed.
sweep_stale_test_files() {
  local file owner
  for file in /tmp/wf-*; do
    [[ $file =~ ^/tmp/wf-([a-z]+)-([0-9]+)- && ${BASH_REMATCH[1]} != pg ]] || continue
    owner=${BASH_REMATCH[2]}
    kill -0 "$owner" 2>/dev/null || rm -rf -- "$file"
  done
}
trap 'sweep_orphaned_postgres; sweep_stale_test_files' EXIT
swift build --build-tests "$@"
# The passes, and what each is for:
#  1. every test of this package but the simulations and those that must run alone, in parallel;
#  2. the deterministic simulations' normal run (suites …SimulationTests: the real drivers' sweep
#     in three lanes and the coordinator's, DriverSimulationTests.defaultSteps and
#     CoordinatorSimulationTests.defaultSteps, over 1,000,000 steps together, each seed twice),
#     in a pass of their own, each lane on a thread of its own: they keep both cores busy for
#     about a minute and a half, which inside the parallel pass starved the gateway's
#     spread-session tests (one failed so here, its client's connection closed after 80 s);
#  3. those alone (`ALONE`), one after the other: the flood tests (Scenarios/Flood: a hostile peer at full speed keeps
#     both cores busy by design, which beside other tests would starve their processes of CPU),
#     the lease keeper's and the session term renewer's tests that block every thread of the test
#     process's concurrency pool for seconds (beside them, in-process tests would take their own
#     slow threads for dead peers),
#     the periodic-work test, which places 50,000 remote children in-process (both cores busy for a
#     minute, and its workers' hosted children crowd the concurrency pool), and the network lab
#     (its faults are judged against heartbeat windows of 0.5–2 s: beside the SIGKILL and
#     simulation tests a starved daemon misses heartbeats no fault dropped; a CI run failed so).
#     The gateway's spread-session tests run in the parallel pass: their coordinators' lease
#     terms are renewed on the store's lease event loop (`SessionTermRenewer`), not on the test
#     process's concurrency pool, which the parallel pass starves;
#  4. each example application, a package of its own that depends on this one by path as a
#     user's app does: its workflows, and its coordinator and workers as real processes (the
#     email browser's page in a real browser, scripts/cluster.sh and the systemd units included).
# With arguments (e.g. --filter X) only those tests of this package run.
#
# At most 32 tests run at once (Swift Testing's own limit, overridable): unbounded, every test of
# the package starts together, ~150 runtimes with their threads, dozens of worker processes and
# PostgreSQL servers on 2 cores, and the concurrency pool (one thread per core) then took up to
# 35 s to resume a waiting test, longer than the deadlines the protocol tests play against.
# The simulators' determinism check (each seed runs twice, the traces must hash the same) needs
# Swift's hashed collections to iterate in one order in every run: the drivers they run keep
# dictionaries, which Swift otherwise seeds per process and per dictionary.
export SWIFT_DETERMINISTIC_HASHING=1
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-32}
# Each pass has a bound, about three times what it takes on a loaded 2-core machine: a pass still
# running then (a test waiting forever) is stopped, with every process it started, naming the
# tests it had started and not finished, rather than holding CI until CI's own limit.
run_pass() { # NAME MINUTES ARGUMENTS… (of `swift test --skip-build`)
  local name=$1 minutes=$2 log status
  shift 2
  log=$(mktemp "/tmp/wf-testpass-$$-XXXXXX")
  set +e
  timeout --kill-after=60 "$((minutes * 60))" swift test --skip-build "$@" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  set -e
  if [[ $status -eq 124 || $status -eq 137 ]]; then
    echo "test.sh: the $name pass did not finish within $minutes minutes and was stopped; these tests had started and not finished:" >&2
    unfinished_tests "$log" >&2
  fi
  rm -f "$log"
  return "$status"
}
# The tests a Swift Testing log says started and does not say passed or failed.
unfinished_tests() { # LOG
  awk '{ gsub(/\033\[[0-9;]*m/, "") }
    match($0, /Test "[^"]*"/) {
      name = substr($0, RSTART + 6, RLENGTH - 7)
      if ($0 ~ /" started\.$/) started[name] = 1
      else if ($0 ~ /" (passed|failed) after/) finished[name] = 1
    }
    END { for (name in started) if (!(name in finished)) print "  " name }' "$1"
}
if [[ $# -eq 0 ]]; then
  ALONE="ClusterFloodTests|LeaseKeeperTests/renewsWhileThePoolIsBlocked|SessionTermRenewerTests/renewsWhileThePoolIsBlocked|PeriodicWorkTests|NetworkLabTests"
  SIMULATIONS="SimulationTests"
  run_pass parallel 35 --skip "$ALONE|$SIMULATIONS"
  run_pass simulations 15 --filter "$SIMULATIONS"
  run_pass alone 25 --no-parallel --filter "$ALONE"
else
  swift test --skip-build "$@"
  exit 0
fi
# The examples build in this package's own build directory (EXAMPLES_SCRATCH, default .build):
# each depends on this package by path, so they reuse everything the build above compiled (this
# package's modules and every dependency's) and compile only their own modules. In a directory of
# their own, a fresh machine compiled the whole dependency graph a second time (CI's longest
# step). The price: the next build of this package recompiles the few modules whose settings an
# example's graph changes (Hummingbird's, about 45 s here); a developer running this script often
# may set EXAMPLES_SCRATCH=.build-examples. Each example's tests run right after its own build:
# `swift test --skip-build` runs the test bundle built last.
examples_scratch=${EXAMPLES_SCRATCH:-.build}
for app in Examples/EmailBrowser Examples/OrderFulfilment; do
  swift build --build-tests --package-path "$app" --scratch-path "$examples_scratch"
  swift test --skip-build --package-path "$app" --scratch-path "$examples_scratch"
done
