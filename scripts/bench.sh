#!/usr/bin/env bash
# Builds the benchmark suite in release mode and prints one table: every figure beside its
# baseline measured in the same run (figure, value, baseline, ratio, goal, met?).
#   scripts/bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build -c release --product workflow-bench >&2
bin="$(swift build -c release --show-bin-path)/workflow-bench"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(lscpu | awk -F: '/Model name/ {gsub(/^ +/, "", $2); print $2}'), $(swift --version 2>/dev/null | head -1)"
"$bin"
