#!/usr/bin/env bash
# Rewrites the settings table in docs/OPERATIONS.md (between its two marker lines) from the
# settings' declarations, as `workflow-coordinator settings` prints them. The test
# SettingDeclarationTests fails while the table differs from the declarations.
#
#   scripts/settings-table.sh
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
swift build --product test-coordinator >"$log" 2>&1 || { cat "$log"; exit 1; }
table=$(mktemp)
trap 'rm -f "$table" "$log"' EXIT
"$(swift build --show-bin-path 2>/dev/null)/test-coordinator" settings >"$table"
begin='<!-- settings table:'
end='<!-- end of settings table -->'
awk -v begin="$begin" -v end="$end" -v table="$table" '
  index($0, begin) == 1 { print; while ((getline line < table) > 0) print line; skipping = 1; next }
  index($0, end) == 1 { skipping = 0 }
  !skipping { print }
' docs/OPERATIONS.md >docs/OPERATIONS.md.new
mv docs/OPERATIONS.md.new docs/OPERATIONS.md
echo "docs/OPERATIONS.md: settings table rewritten"
