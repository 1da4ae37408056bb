#!/usr/bin/env bash
# docs/options.md is what `geodl options` prints from the option tables today.
set -euo pipefail
geodl=$1
root=$(realpath "$(dirname "$0")/../..")
if ! diff -u "$root/docs/options.md" <("$geodl" options); then
  echo "docs/options.md is out of step with the option tables: run scripts/update-docs.sh"
  exit 1
fi
echo "docs/options.md is in step with the option tables ($(grep -c '^| ' "$root/docs/options.md") rows)"
