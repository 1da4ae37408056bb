#!/usr/bin/env bash
# Regenerates what is made from the option tables: docs/options.md, and the README's list of
# Processing parameters between its "begin: generated" and "end: generated" lines (the test
# options_reference_in_step fails while either is out of step). Needs a build: scripts/build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build/engine/geodl options > docs/options.md
echo "docs/options.md: $(grep -c '^| ' docs/options.md) table rows"
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
build/engine/geodl options --qgis > "$summary"
awk -v summary="$summary" '
  /^<!-- end: generated/ { while ((getline line < summary) > 0) print line; skipping = 0 }
  !skipping { print }
  /^<!-- begin: generated/ { skipping = 1 }
' README.md > README.md.new
mv README.md.new README.md
echo "README.md: $(wc -l < "$summary") algorithms' parameters"
