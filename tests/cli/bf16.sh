#!/usr/bin/env bash
# bf16 classification on the CLI: against fp32 on the same raster, at least 99.5% of the
# pixels get the same class and no probability moves by more than 8 of 255 (skipped, saying
# so, on a CPU without AVX512_BF16 or AMX-BF16); and, with oneDNN capped below them
# (DNNL_MAX_CPU_ISA=AVX2, on any CPU), bf16 is refused with the instructions named and
# nothing written.
# Usage: bf16.sh GEODL RASTER MODEL WORKDIR
set -euo pipefail
geodl=$(realpath "$1") raster=$(realpath "$2") model=$(realpath "$3") work=$4
rm -rf "$work" && mkdir -p "$work"
work=$(realpath "$work")
args=(-q classify --input "$raster" --model "$model" --window 64 --batch-size 4 --threads 2 --probabilities)
code=0
DNNL_MAX_CPU_ISA=AVX2 "$geodl" "${args[@]}" --output "$work/capped/c.tif" --precision bf16 > "$work/capped.log" 2>&1 || code=$?
[ "$code" = 3 ] || { cat "$work/capped.log"; echo "FAILED: bf16 without the instructions: exit $code, not 3"; exit 1; }
grep -q "bf16 needs a CPU with AVX512_BF16 or AMX-BF16" "$work/capped.log" || { cat "$work/capped.log"; exit 1; }
[ ! -e "$work/capped" ] || { echo "FAILED: a refused run left $work/capped"; exit 1; }
echo "bf16 refused under DNNL_MAX_CPU_ISA=AVX2, nothing written"
"$geodl" "${args[@]}" --output "$work/fp32/c.tif" > "$work/fp32.log" 2>&1 || { cat "$work/fp32.log"; exit 1; }
code=0
"$geodl" "${args[@]}" --output "$work/bf16/c.tif" --precision bf16 > "$work/bf16.log" 2>&1 || code=$?
if [ "$code" = 3 ] && grep -q "bf16 needs a CPU" "$work/bf16.log"; then
  echo "SKIPPED: this CPU has neither AVX512_BF16 nor AMX-BF16: no bf16 classification to compare"
  echo "bf16: every check passed"
  exit 0
fi
[ "$code" = 0 ] || { cat "$work/bf16.log"; exit 1; }
grep -q "precision bf16 (AMX-BF16\|precision bf16 (AVX512_BF16" "$work/bf16.log" || { cat "$work/bf16.log"; exit 1; }
/usr/bin/python3 - "$work" <<'PY'
import sys
import numpy as np
from osgeo import gdal
w = sys.argv[1]
a, b = (gdal.Open(w + "/%s/c.tif" % p).ReadAsArray() for p in ("fp32", "bf16"))
pa, pb = (gdal.Open(w + "/%s/c_probabilities.tif" % p).ReadAsArray().astype(int) for p in ("fp32", "bf16"))
agree, moved = float((a == b).mean()), int(abs(pa - pb).max())
print("bf16 against fp32: %.4f%% of the pixels the same class, probabilities within %d of 255" % (100 * agree, moved))
assert agree >= 0.995 and moved <= 8, "bf16 strays from fp32"
PY
echo "bf16: every check passed"
