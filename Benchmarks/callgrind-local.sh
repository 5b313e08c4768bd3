#!/usr/bin/env bash
# Instruction counts of the local render pass and of one awaited tap, with callgrind: repeatable
# on a noisy shared machine, unlike times. Each operation runs twice, LOW and HIGH times, in
# `wf-profile` (Benchmarks/Profile, the benchmark's own workflows, built here against the release
# build's Workflow objects); (Ir(HIGH) - Ir(LOW)) / (HIGH - LOW) / units is the cost of one
# iteration per unit, without the process's start-up. See docs/BENCHMARKS.md.
#   swift build -c release --product workflow-bench && Benchmarks/callgrind-local.sh
# Needs valgrind (apt-get install -y valgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-.build/release}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
bin="$out/wf-profile"
swiftc -O -wmo -parse-as-library -module-name wf_profile -I "$build/Modules" \
    Benchmarks/WorkflowBenchmarks/LocalFigures.swift Benchmarks/WorkflowBenchmarks/Support.swift \
    Benchmarks/Profile/ProfileMain.swift "$build"/Workflow.build/*.o -o "$bin"
ir() { # profile count -> total instructions of the process, every thread
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.%p" "$bin" "$1" "$2" >/dev/null 2>"$out/log"
    grep -h '^summary:' "$out"/cg.* | awk '{ s += $2 } END { print s }'
    rm -f "$out"/cg.*
}
row() { # name profile low high units
    local low high
    low=$(ir "$2" "$3"); high=$(ir "$2" "$4")
    awk -v n="$1" -v a="$low" -v b="$high" -v l="$3" -v h="$4" -v u="$5" \
        'BEGIN { printf "| %-40s | %10.0f |\n", n, (b - a) / (h - l) / u }'
}
echo "| operation (instructions per unit)        |   Ir/unit |"
echo "|------------------------------------------|------------|"
row "first render, wide 1,000 (per node)" first-wide 1 4 1000
row "first render, chain 1,000 (per node)" first-chain 1 4 1000
row "re-render, wide 1,000 (per node)" rerender-wide 2 12 1000
row "re-render, chain 1,000 (per node)" rerender-chain 2 12 1000
row "one awaited tap, 3 levels (per tap)" tap 100 1100 1
row "one awaited tap, queued (per tap)" tap-queued 100 1100 1
