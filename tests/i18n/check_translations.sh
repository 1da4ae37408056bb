#!/usr/bin/env bash
# Every tr() string of the plugin has a finished translation in each i18n/*.ts: lupdate a
# copy from the sources, then lrelease must report no unfinished translation.
set -euo pipefail
root=$(realpath "$(dirname "$0")/../..")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for ts in "$root"/i18n/*.ts; do
  cp "$ts" "$tmp/"
  copy=$tmp/$(basename "$ts")
  (cd "$root" && lupdate -no-obsolete -locations none -tr-function-alias QT_TR_NOOP+=GEODL_TR \
    plugin/*.cpp plugin/*.h engine/app/*_options.cpp engine/app/*_options.h -ts "$copy") > /dev/null 2>&1
  report=$(lrelease "$copy" -qm "$tmp/out.qm")
  echo "$(basename "$ts"): $(echo "$report" | grep -o 'Generated.*')"
  unfinished=$(echo "$report" | sed -n 's/.*finished and \([0-9]*\) unfinished.*/\1/p')
  if [ "${unfinished:-1}" != 0 ]; then
    echo "  $unfinished string(s) untranslated: run scripts/update-translations.sh and translate them"
    status=1
  fi
done
exit $status
