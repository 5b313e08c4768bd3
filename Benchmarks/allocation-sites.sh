#!/usr/bin/env bash
# Where a remote round trip's heap allocations come from (figure 3: update a remote child's
# props, await its rendering), in the parent and in the worker: both processes run under
# callgrind as in `callgrind-remote.sh`, with every allocation function's calls kept apart by
# their last 14 callers (`--separate-callers14=malloc`, …), once for LOW and once for HIGH round
# trips; `allocation-sites.py` prints the difference per round trip, chain by chain. Counts are
# exact, so two runs agree. See docs/BENCHMARKS.md, "How to reproduce".
#   swift build -c release --product workflow-bench && Benchmarks/allocation-sites.sh
#   DEPTH=12 Benchmarks/allocation-sites.sh .build-bench/release     (another build, longer chains)
# Needs valgrind and python3; swift-demangle from the toolchain on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-.build/release}"
bin="$(cd "$build" && pwd)/workflow-bench"
low="${LOW:-50}"
high="${HIGH:-250}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
options=(--tool=callgrind)
for allocator in malloc calloc realloc posix_memalign memalign aligned_alloc; do
    options+=("--separate-callers14=$allocator")
done
profile() { # count
    local endpoint="ipc://$out/parent-$1" worker
    valgrind "${options[@]}" --callgrind-out-file="$out/worker-$1.cg" "$bin" worker "$endpoint" bench-1 >/dev/null 2>&1 &
    worker=$!
    valgrind "${options[@]}" --callgrind-out-file="$out/parent-$1.cg" "$bin" profile-remote "$1" "$endpoint" >/dev/null 2>&1
    kill -TERM "$worker"
    wait "$worker" || true
}
profile "$low"
profile "$high"
for process in parent worker; do
    echo "== $process"
    python3 Benchmarks/allocation-sites.py "$out/$process-$low.cg" "$out/$process-$high.cg" "$low" "$high" "${DEPTH:-8}"
done
