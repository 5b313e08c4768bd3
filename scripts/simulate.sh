#!/usr/bin/env bash
# The deterministic simulator (Tests/WorkflowRemoteTests/Simulation) from the command line.
#   scripts/simulate.sh                 the long mode for 10 minutes: new seeds from the clock
#   scripts/simulate.sh --minutes 30    the long mode for 30 minutes
#   scripts/simulate.sh --seed 561      replays one seed (nested or not as the sweep ran it;
#                                       --nested 0|1 says otherwise)
# Each seed runs twice and both runs must hash the same (determinism). It prints the steps, the
# seeds, the simulated seconds per real second and the faults injected; a violation prints its
# one-line replay. The normal run (1,000,000 steps) is part of scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=10 seed="" nested=""
while [[ $# -gt 0 ]]; do
  case "$1" in
  --minutes) minutes="${2:?--minutes needs a number}"; shift 2 ;;
  --seed) seed="${2:?--seed needs a number}"; shift 2 ;;
  --nested) nested="${2:?--nested needs 0 or 1}"; shift 2 ;;
  -h | --help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "simulate.sh: unknown argument '$1' (--minutes N, --seed S, --nested 0|1)" >&2; exit 64 ;;
  esac
done
if ! [[ $minutes =~ ^[0-9]+([.][0-9]+)?$ ]]; then echo "simulate.sh: --minutes wants a number, got '$minutes'" >&2; exit 64; fi
if [[ -n $seed ]] && ! [[ $seed =~ ^[0-9]+$ ]]; then echo "simulate.sh: --seed wants a number, got '$seed'" >&2; exit 64; fi
if [[ -n $nested ]] && ! [[ $nested =~ ^[01]$ ]]; then echo "simulate.sh: --nested wants 0 or 1, got '$nested'" >&2; exit 64; fi
scripts/install-deps.sh
swift build --build-tests >&2
filter="WorkerSimulationTests/invariantsHoldAcrossSeeds"
if [[ -n $seed ]]; then
  SIM_SEED="$seed" ${nested:+SIM_NESTED="$nested"} swift test --skip-build --filter "$filter" 2>&1 | grep -vE '^(◇|↳)'
else
  SIM_SECONDS="$(awk -v m="$minutes" 'BEGIN { print m * 60 }')" swift test --skip-build --filter "$filter" 2>&1 | grep -vE '^(◇|↳)'
fi
