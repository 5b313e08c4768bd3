#!/usr/bin/env bash
# Builds the benchmark suite in release mode and prints one table: every figure beside its
# baseline measured in the same run (figure, value, baseline, ratio, goal, met?), the table
# docs/BENCHMARKS.md shows. The malloc counter (Benchmarks/MallocCounter) is preloaded, so the
# table has the allocation rows ("A …", "4 allocations …") of both processes.
#   scripts/bench.sh                     (about one minute on 2 cores)
#   BENCH_SCRATCH=.build-bench scripts/bench.sh   (own build directory, e.g. beside other builds)
# The benchmark spawns itself as worker and raw-ZeroMQ peer processes (ipc endpoints under /tmp
# only); every one exits when the run ends, however it ends. See docs/BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scratch="${BENCH_SCRATCH:-.build}"
swift build -c release --scratch-path "$scratch" --product workflow-bench >&2
bin="$(swift build -c release --scratch-path "$scratch" --show-bin-path)/workflow-bench"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2}'), $(swift --version 2>/dev/null | head -1)"
counter_dir="$(mktemp -d)"
trap 'rm -rf "$counter_dir"' EXIT
cc -O2 -shared -fPIC -o "$counter_dir/libwfmalloc.so" Benchmarks/MallocCounter/malloc_counter.c
LD_PRELOAD="$counter_dir/libwfmalloc.so" "$bin"
