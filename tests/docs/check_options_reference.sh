#!/usr/bin/env bash
# docs/options.md, and the README's list of Processing parameters, are what `geodl options`
# prints from the option tables today: neither is copied by hand.
set -euo pipefail
geodl=$1
root=$(realpath "$(dirname "$0")/../..")
if ! diff -u "$root/docs/options.md" <("$geodl" options); then
  echo "docs/options.md is out of step with the option tables: run scripts/update-docs.sh"
  exit 1
fi
readme_list=$(sed -n '/^<!-- begin: generated/,/^<!-- end: generated/p' "$root/README.md" | sed '1d;$d')
if [ -z "$readme_list" ] || ! diff -u <(echo "$readme_list") <("$geodl" options --qgis); then
  echo "the README's list of Processing parameters is out of step with the option tables: run scripts/update-docs.sh"
  exit 1
fi
# The hand-written lists it replaced do not come back.
if grep -n '^Parameters of `geodl:' "$root/README.md"; then
  echo "the README lists an algorithm's parameters by hand: the list is generated (scripts/update-docs.sh)"
  exit 1
fi
# Nor do restated defaults: the docs say what a value does and leave its default to docs/options.md.
if grep -nE '\(the default|the default\)|, the default,|\(default [0-9]|[0-9.]+ by default' "$root/README.md" "$root/docs/user-guide.md"; then
  echo "a default is restated by hand: say what the value does, and leave the default to docs/options.md"
  exit 1
fi
echo "docs/options.md and the README's parameters are in step with the option tables ($(grep -c '^| ' "$root/docs/options.md") rows)"
