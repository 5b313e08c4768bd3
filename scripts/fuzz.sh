#!/usr/bin/env bash
# Fuzz the wire protocol decoders with libFuzzer + AddressSanitizer, then run the
# protocol-state fuzzer (random valid and invalid message sequences against a live parent).
#
#   scripts/fuzz.sh [seconds] [protocol-rounds]     (defaults 60 and 200000)
#
# Builds Tests/Fuzz/WireFuzzer.swift together with Sources/WireProtocol/*.swift, runs it on a
# copy of the committed seed corpus (Tests/Fuzz/corpus/) so new inputs never dirty the tree,
# and writes crash artifacts under fuzz-artifacts/ (gitignored). Exits non-zero on any crash.
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/fuzz-artifacts"
work="$out/work"
mkdir -p "$out" "$work"
rm -rf "$work/corpus"
cp -R "$root/Tests/Fuzz/corpus" "$work/corpus"

echo "fuzz: building $out/wire-fuzzer"
swiftc -sanitize=fuzzer,address -parse-as-library -O -swift-version 6 -use-ld=lld \
    -module-name WireFuzz \
    "$root"/Sources/WireProtocol/*.swift "$root/Tests/Fuzz/WireFuzzer.swift" \
    -o "$out/wire-fuzzer"

echo "fuzz: running for ${seconds}s"
set +e
"$out/wire-fuzzer" "$work/corpus" \
    -max_total_time="$seconds" \
    -max_len=4096 \
    -timeout=10 \
    -rss_limit_mb=2048 \
    -print_final_stats=1 \
    -artifact_prefix="$out/" 2>&1 | tee "$out/last-run.log"
status=${PIPESTATUS[0]}
set -e

if [ "$status" -ne 0 ]; then
    echo "fuzz: FAILED (exit $status); artifacts in $out/" >&2
    ls "$out"/crash-* "$out"/timeout-* "$out"/oom-* "$out"/leak-* 2>/dev/null >&2 || true
    exit 1
fi
echo "fuzz: no crashes in ${seconds}s"

rounds="${2:-200000}"
echo "fuzz: protocol-state fuzzer, $rounds random messages against a live parent"
cd "$root"
swift build --build-tests >/dev/null
WORKFLOW_PROTOCOL_FUZZ_ROUNDS="$rounds" swift test --skip-build --filter ProtocolFuzzTests 2>&1 | grep -E "✔|✘|seed" | tee -a "$out/last-run.log"
echo "fuzz: protocol-state fuzzer done"
