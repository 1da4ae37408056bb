#!/usr/bin/env bash
# Refreshes i18n/*.ts from the plugin's tr() strings and the option tables' GEODL_TR() texts
# (new strings come in unfinished, removed ones go). Translate the new ones (Qt Linguist, or
# by hand), then rebuild; the test i18n_complete fails while a string is untranslated.
set -euo pipefail
cd "$(dirname "$0")/.."
for ts in i18n/*.ts; do
  lupdate -no-obsolete -locations none -tr-function-alias QT_TR_NOOP+=GEODL_TR \
    plugin/*.cpp plugin/*.h engine/app/*_options.cpp engine/app/*_options.h -ts "$ts"
done
