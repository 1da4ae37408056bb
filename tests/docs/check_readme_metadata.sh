#!/usr/bin/env bash
# The README's header says what metadata/metadata.txt says (description and version), and
# the screenshots it and the user guide show exist.
set -euo pipefail
root=$(realpath "$(dirname "$0")/../..")
meta=$root/metadata/metadata.txt
description=$(sed -n 's/^description=//p' "$meta")
version=$(sed -n 's/^version=//p' "$meta")
grep -qF "> $description" "$root/README.md" || { echo "README.md lacks the description of metadata.txt: $description"; exit 1; }
grep -qF "> Version $version " "$root/README.md" || { echo "README.md does not say version $version"; exit 1; }
for doc in README.md docs/user-guide.md; do
  for image in $(grep -o '([^()]*\.png)' "$root/$doc" | tr -d '()'); do
    [ -f "$(dirname "$root/$doc")/$image" ] || { echo "$doc shows $image, which is missing"; exit 1; }
  done
done
echo "README matches metadata.txt (version $version); screenshots present"
