#!/usr/bin/env bash
# Refreshes i18n/*.ts from the plugin's tr() strings (new strings come in unfinished,
# removed ones go). Translate the new ones (Qt Linguist, or by hand), then rebuild; the
# test i18n_complete fails while a string is untranslated.
set -euo pipefail
cd "$(dirname "$0")/.."
for ts in i18n/*.ts; do
  lupdate -no-obsolete -locations none plugin/*.cpp plugin/*.h -ts "$ts"
done
