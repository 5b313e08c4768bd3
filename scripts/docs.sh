#!/usr/bin/env bash
# Builds the DocC documentation of every public module into .build/docs/<Module>.doccarchive
# (each archive is a static site: serve its folder, or open it with `docc preview`).
# Fails when DocC reports any warning: a broken symbol link or an undocumented parameter.
#
#   scripts/docs.sh            all modules
#   scripts/docs.sh Workflow   one module
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
out=.build/docs
mkdir -p "$out"
targets=("$@")
if ((${#targets[@]} == 0)); then
  targets=(Workflow WorkflowTesting ZeroMQ WireProtocol WorkflowRemote WorkflowCluster WorkflowGateway WorkflowClusterCommands WorkflowClusterTesting)
fi
failed=0
for target in "${targets[@]}"; do
  log=$(mktemp)
  if swift package --allow-writing-to-directory "$out" generate-documentation \
      --target "$target" --output-path "$out/$target.doccarchive" >"$log" 2>&1; then
    # SwiftPM's note about a dependency's stray CMakeLists.txt (swift-distributed-tracing, under
    # Hummingbird) is about that checkout, not about these docs.
    sed -i -E "/^warning: '[^']+': found [0-9]+ file\(s\) which are unhandled/,+1d" "$log"
    if grep -q '^warning:' "$log"; then
      grep -A6 '^warning:' "$log" >&2
      echo "docs: $target has DocC warnings (above)" >&2
      failed=1
    else
      echo "docs: $target -> $out/$target.doccarchive"
    fi
  else
    cat "$log" >&2
    echo "docs: $target failed to build" >&2
    failed=1
  fi
  rm -f "$log"
done
exit "$failed"
