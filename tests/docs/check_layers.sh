#!/usr/bin/env bash
# Each folder of engine/ is one CMake target and may include only the folders below it:
#   base; core and io on base; model and parallel on core; app on model, parallel and io; cli
#   on app. Every folder of engine/ is in the table (a folder renamed or added must say so).
# GDAL, OGR and HDF5 stay inside io's .cpp files (and io's internal gdal_util.h); LibTorch
# stays out of base and io. LibTorch's version is checked in engine/core/torch_compat.h alone.
set -euo pipefail
root=$(realpath "$(dirname "$0")/../..")
cd "$root/engine"
status=0
# allowed quoted-include folders, per folder
declare -A allowed=(
  [base]="base"
  [core]="base core"
  [model]="base core model"
  [parallel]="base core parallel"
  [io]="base io"
  [app]="base core model io parallel app"
  [cli]="base core model io parallel app cli"
)
for folder in */; do
  folder=${folder%/}
  [ -n "${allowed[$folder]:-}" ] || { echo "engine/$folder is in no layer of this check: add it"; status=1; }
done
for folder in "${!allowed[@]}"; do
  [ -d "$folder" ] || { echo "engine/$folder, a layer of this check, does not exist"; status=1; continue; }
  pattern=$(echo "${allowed[$folder]}" | sed 's/ /\\|/g')
  bad=$(grep -Hn '^#include "' "$folder"/*.h "$folder"/*.cpp 2>/dev/null | grep -v "#include \"\($pattern\)/" || true)
  if [ -n "$bad" ]; then
    echo "engine/$folder includes what it may not (allowed: ${allowed[$folder]}):"
    echo "$bad"
    status=1
  fi
done
gdal=$(grep -Hln '#include <\(gdal\|ogr\|cpl_\|hdf5\)' */*.h */*.cpp | grep -v '^io/.*\.cpp$' | grep -v '^io/gdal_util.h$' || true)
if [ -n "$gdal" ]; then echo "GDAL, OGR or HDF5 headers outside io's sources: $gdal"; status=1; fi
internal=$(grep -Hln '#include "io/gdal_util.h"' */*.h */*.cpp | grep -v '^io/' || true)
if [ -n "$internal" ]; then echo "io's internal gdal_util.h used outside io: $internal"; status=1; fi
torch=$(grep -Hln '#include <\(torch\|ATen\|c10\)' base/* io/* || true)
if [ -n "$torch" ]; then echo "LibTorch in base or io: $torch"; status=1; fi
# The jobs' shared tables and the other jobs do not depend on the training job.
train=$(grep -Hln '#include "app/train.h"' app/shared_options.h app/classify*.h app/classify*.cpp app/create_samples*.h app/create_samples*.cpp app/batch_probe_options.* || true)
if [ -n "$train" ]; then echo "these depend on the training job (app/train.h): $train"; status=1; fi
# What differs between the LibTorch versions GeoDL builds against is in one header.
versions=$(cd "$root" && grep -rlnE 'TORCH_VERSION_(MAJOR|MINOR)' engine tests benchmarks plugin | grep -v '^engine/core/torch_compat.h$' || true)
if [ -n "$versions" ]; then echo "LibTorch version checks outside engine/core/torch_compat.h: $versions"; status=1; fi
[ $status = 0 ] && echo "every folder includes only what its target may use"
exit $status
