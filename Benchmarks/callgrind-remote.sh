#!/usr/bin/env bash
# Instruction counts of a remote path, in the parent and in the worker process, with callgrind:
# repeatable on a noisy shared machine, unlike times. Two figures:
#   round-trip (default)  figure 3: update a remote child's props, await its rendering
#                         (`workflow-bench profile-remote COUNT ENDPOINT`; LOW=50, HIGH=250)
#   events                figure 4: events → remote child → output → parent
#                         (`workflow-bench profile-events COUNT ENDPOINT`; LOW=2000, HIGH=10000)
#   fanout                figure 5: props change of CHILDREN (default 1000) remote children
#                         (`workflow-bench profile-fanout COUNT ENDPOINT CHILDREN`; LOW=5, HIGH=20;
#                         also printed per child)
#   fanstart              figure 5's start: CHILDREN new remote children in place of the CHILDREN
#                         before (`workflow-bench profile-fanstart COUNT ENDPOINT CHILDREN`;
#                         LOW=2, HIGH=6; also printed per child)
# Both processes run with a 5 s heartbeat (WF_BENCH_HEARTBEAT_MS): under callgrind a pass of a
# thousand children takes seconds, and the default heartbeat fenced the worker mid-profile.
# The profile mode runs COUNT of them against one worker (`workflow-bench worker ENDPOINT
# bench-1`); both run under callgrind, started here (Foundation's Process cannot spawn under
# valgrind), and the worker is ended with SIGTERM, after which callgrind still writes its profile.
# Each process's (Ir(HIGH) - Ir(LOW)) / (HIGH - LOW) is the cost of one round trip (or event)
# without start-up. With ALLOCS=1 it also runs the same mode once under the preloaded malloc
# counter (exact allocation counts of both processes). With KEEP=DIR the HIGH run's profiles stay
# in DIR (parent.cg, worker.cg) for callgrind_annotate. See docs/BENCHMARKS.md, "How to
# reproduce".
#   swift build -c release --product workflow-bench && Benchmarks/callgrind-remote.sh
#   Benchmarks/callgrind-remote.sh .build-bench/release           (another build directory)
#   Benchmarks/callgrind-remote.sh .build/release events          (figure 4)
#   CHILDREN=100 Benchmarks/callgrind-remote.sh .build/release fanout   (figure 5, 100 children)
# Needs valgrind (apt-get install -y valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-.build/release}"
figure="${2:-round-trip}"
case "$figure" in
round-trip) mode=profile-remote unit="round trip" low="${LOW:-50}" high="${HIGH:-250}" allocs=2000 ;;
events) mode=profile-events unit=event low="${LOW:-2000}" high="${HIGH:-10000}" allocs=200000 ;;
fanout) mode=profile-fanout unit="props change" low="${LOW:-5}" high="${HIGH:-20}" allocs=20 ;;
fanstart) mode=profile-fanstart unit="start" low="${LOW:-2}" high="${HIGH:-6}" allocs=6 ;;
*) echo "unknown figure $figure (round-trip, events, fanout or fanstart)" >&2; exit 64 ;;
esac
children="${CHILDREN:-1000}"
extra=() # the profile mode's arguments after COUNT ENDPOINT
if [ "$figure" = fanout ] || [ "$figure" = fanstart ]; then extra=("$children"); fi
export WF_BENCH_HEARTBEAT_MS="${WF_BENCH_HEARTBEAT_MS:-5000}"
bin="$(cd "$build" && pwd)/workflow-bench"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
ir() { # count -> "parent worker": total instructions of each process, every thread
    local endpoint="ipc://$out/parent-$1" worker parent
    valgrind --tool=callgrind --callgrind-out-file="$out/worker.cg" "$bin" worker "$endpoint" bench-1 \
        >/dev/null 2>"$out/worker.log" &
    worker=$!
    valgrind --tool=callgrind --callgrind-out-file="$out/parent.cg" "$bin" "$mode" "$1" "$endpoint" "${extra[@]}" \
        >/dev/null 2>"$out/parent.log"
    kill -TERM "$worker"
    wait "$worker" || true
    parent=$(grep -h '^summary:' "$out/parent.cg" | awk '{ s += $2 } END { print s + 0 }')
    worker=$(grep -h '^summary:' "$out/worker.cg" | awk '{ s += $2 } END { print s + 0 }')
    if [ -n "${KEEP:-}" ] && [ "$1" = "$high" ]; then
        mkdir -p "$KEEP" && cp "$out/parent.cg" "$out/worker.cg" "$KEEP/"
    fi
    rm -f "$out"/*.cg
    echo "$parent $worker"
}
read -r pl wl <<<"$(ir "$low")"
read -r ph wh <<<"$(ir "$high")"
awk -v pl="$pl" -v wl="$wl" -v ph="$ph" -v wh="$wh" -v l="$low" -v h="$high" -v unit="$unit" 'BEGIN {
    p = (ph - pl) / (h - l); w = (wh - wl) / (h - l)
    printf "instructions per %s: parent %.0f, worker %.0f, both %.0f\n", unit, p, w, p + w
}'
if [ "$figure" = fanout ] || [ "$figure" = fanstart ]; then
    awk -v pl="$pl" -v wl="$wl" -v ph="$ph" -v wh="$wh" -v l="$low" -v h="$high" -v n="$children" 'BEGIN {
        p = (ph - pl) / (h - l) / n; w = (wh - wl) / (h - l) / n
        printf "instructions per child (%d children): parent %.0f, worker %.0f, both %.0f\n", n, p, w, p + w
    }'
fi
if [ -n "${ALLOCS:-}" ]; then
    counter="$out/libwfmalloc.so"
    cc -O2 -shared -fPIC -o "$counter" Benchmarks/MallocCounter/malloc_counter.c
    if [ "$figure" = fanout ] || [ "$figure" = fanstart ]; then
        LD_PRELOAD="$counter" "$bin" "$mode" "$allocs" "" "$children"
    else
        LD_PRELOAD="$counter" "$bin" "$mode" "$allocs"
    fi
fi
