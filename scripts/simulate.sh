#!/usr/bin/env bash
# The deterministic simulators from the command line: every suite whose name ends in
# "SimulationTests" (the convention: such a suite reads SIM_SECONDS for its long mode and SIM_SEED
# for a replay; today DriverSimulationTests, the real runtimes' drivers over a simulated network,
# and CoordinatorSimulationTests, the coordinator's sessions, lease terms and leader lease).
#   scripts/simulate.sh                       the long mode for 10 minutes: new seeds from the clock
#   scripts/simulate.sh --minutes 30          the long mode for 30 minutes (each suite in turn)
#   scripts/simulate.sh --seed 561            replays one seed in each suite
#   scripts/simulate.sh --seed 7 --suite DriverSimulationTests    replays it in one suite
#   scripts/simulate.sh --release             with a release build (tests built with -enable-testing)
# Each seed runs twice and both runs must hash the same (determinism). Each suite prints the
# steps, the seeds, the simulated seconds per real second and the faults injected; a violation
# prints its one-line replay. The normal run is part of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=10 seed="" suite="" release=""
while [[ $# -gt 0 ]]; do
  case "$1" in
  --minutes) minutes="${2:?--minutes needs a number}"; shift 2 ;;
  --seed) seed="${2:?--seed needs a number}"; shift 2 ;;
  --suite) suite="${2:?--suite needs a suite name}"; shift 2 ;;
  --release) release=1; shift ;;
  -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "simulate.sh: unknown argument '$1' (--minutes N, --seed S, --suite NAME, --release)" >&2; exit 64 ;;
  esac
done
if ! [[ $minutes =~ ^[0-9]+([.][0-9]+)?$ ]]; then echo "simulate.sh: --minutes wants a number, got '$minutes'" >&2; exit 64; fi
if [[ -n $seed ]] && ! [[ $seed =~ ^[0-9]+$ ]]; then echo "simulate.sh: --seed wants a number, got '$seed'" >&2; exit 64; fi
if [[ -n $suite ]] && ! [[ $suite =~ ^[A-Za-z0-9_]+SimulationTests$ ]]; then
  echo "simulate.sh: --suite wants a suite named …SimulationTests, got '$suite'" >&2; exit 64
fi
scripts/install-deps.sh
build=() # swift build/test arguments for the configuration
if [[ -n $release ]]; then build=(-c release -Xswiftc -enable-testing); fi
swift build --build-tests "${build[@]}" >&2
# Two runs of a seed, and a replay in another process, iterate the drivers' dictionaries in one
# order only with this (see DriverSimulationTests).
export SWIFT_DETERMINISTIC_HASHING=1
# The suites, found in the test binary's list (a suite added later under the convention runs too).
if [[ -n $suite ]]; then
  suites=("$suite")
else
  mapfile -t suites < <(swift test --skip-build "${build[@]}" list 2>/dev/null | sed -n 's/^[A-Za-z0-9_]*\.\([A-Za-z0-9_]*SimulationTests\)\/.*/\1/p' | sort -u)
fi
if [[ ${#suites[@]} -eq 0 ]]; then echo "simulate.sh: no suite named …SimulationTests in the test binary" >&2; exit 1; fi
echo "simulation suites: ${suites[*]}"
status=0
for name in "${suites[@]}"; do
  echo "== $name"
  if [[ -n $seed ]]; then
    SIM_SEED="$seed" swift test --skip-build "${build[@]}" --filter "$name" 2>&1 | grep -vE '^(◇|↳)' || status=1
  else
    # The minutes are shared among the suites.
    seconds="$(awk -v m="$minutes" -v n="${#suites[@]}" 'BEGIN { print m * 60 / n }')"
    SIM_SECONDS="$seconds" swift test --skip-build "${build[@]}" --filter "$name" 2>&1 | grep -vE '^(◇|↳)' || status=1
  fi
done
exit $status
