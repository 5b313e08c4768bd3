#!/usr/bin/env bash
# The remote figures (3–5: round trip, events, fan-out) RUNS times (default 3), with the
# allocation rows (the preloaded malloc counter, inherited by the worker processes).
#   scripts/bench-remote.sh                 three runs, release build in .build
#   RUNS=1 BENCH_SCRATCH=.build-bench scripts/bench-remote.sh
# See docs/BENCHMARKS.md, "How to reproduce".
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="${BENCH_SCRATCH:-.build}"
swift build -c release --scratch-path "$scratch" --product workflow-bench >&2
bin="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/workflow-bench"
counter="$(mktemp -d)/libwfmalloc.so"
cc -O2 -shared -fPIC -o "$counter" Benchmarks/MallocCounter/malloc_counter.c
for run in $(seq 1 "${RUNS:-3}"); do
    echo "run $run"
    LD_PRELOAD="$counter" "$bin" remote
done
