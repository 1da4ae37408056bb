#!/usr/bin/env bash
# Regenerates docs/options.md from the option tables (the test options_reference_in_step
# fails while it is out of step). Needs a build: scripts/build.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
build/engine/geodl options > docs/options.md
echo "docs/options.md: $(grep -c '^| ' docs/options.md) table rows"
