#!/usr/bin/env bash
# Instruction counts of one remote round trip (figure 3: update a remote child's props, await its
# rendering), in the parent and in the worker process, with callgrind: repeatable on a noisy
# shared machine, unlike times. `workflow-bench profile-remote COUNT ENDPOINT` runs COUNT round
# trips against one worker (`workflow-bench worker ENDPOINT bench-1`); both run under callgrind,
# started here (Foundation's Process cannot spawn under valgrind), and the worker is ended with
# SIGTERM, after which callgrind still writes its profile. Each process's
# (Ir(HIGH) - Ir(LOW)) / (HIGH - LOW) is the cost of one round trip without start-up. With ALLOCS=1 it also runs the same mode once
# under the preloaded malloc counter (exact allocation counts of both processes). See
# docs/BENCHMARKS.md, "Remote paths (issue 14)".
#   swift build -c release --product workflow-bench && Benchmarks/callgrind-remote.sh
#   Benchmarks/callgrind-remote.sh .build-bench/release      (another build directory)
# Needs valgrind (apt-get install -y valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-.build/release}"
bin="$(cd "$build" && pwd)/workflow-bench"
low="${LOW:-50}"
high="${HIGH:-250}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
ir() { # count -> "parent worker": total instructions of each process, every thread
    local endpoint="ipc://$out/parent-$1" worker parent
    valgrind --tool=callgrind --callgrind-out-file="$out/worker.cg" "$bin" worker "$endpoint" bench-1 \
        >/dev/null 2>"$out/worker.log" &
    worker=$!
    valgrind --tool=callgrind --callgrind-out-file="$out/parent.cg" "$bin" profile-remote "$1" "$endpoint" \
        >/dev/null 2>"$out/parent.log"
    kill -TERM "$worker"
    wait "$worker" || true
    parent=$(grep -h '^summary:' "$out/parent.cg" | awk '{ s += $2 } END { print s + 0 }')
    worker=$(grep -h '^summary:' "$out/worker.cg" | awk '{ s += $2 } END { print s + 0 }')
    rm -f "$out"/*.cg
    echo "$parent $worker"
}
read -r pl wl <<<"$(ir "$low")"
read -r ph wh <<<"$(ir "$high")"
awk -v pl="$pl" -v wl="$wl" -v ph="$ph" -v wh="$wh" -v l="$low" -v h="$high" 'BEGIN {
    p = (ph - pl) / (h - l); w = (wh - wl) / (h - l)
    printf "instructions per round trip: parent %.0f, worker %.0f, both %.0f\n", p, w, p + w
}'
if [ -n "${ALLOCS:-}" ]; then
    counter="$out/libwfmalloc.so"
    cc -O2 -shared -fPIC -o "$counter" Benchmarks/MallocCounter/malloc_counter.c
    LD_PRELOAD="$counter" "$bin" profile-remote 2000
fi
