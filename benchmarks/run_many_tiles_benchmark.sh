#!/usr/bin/env bash
# A mosaic as tiles against the same mosaic as one raster, side by side in one run (issue 29):
# a generated 3-band scene of SIZE x SIZE pixels (default 5000) cut into 10 x 10 tiles and
# into 20 x 20 tiles, classified as a folder of tiles (the ranks take whole tiles, balanced by
# pixels) and as a VRT of the 10 x 10 tiles (one raster, shared in bands), written as one
# GeoTIFF (rank 0 assembles the other ranks' bands) and as a VRT over parts every rank writes in
# place (nothing assembled), each by 1 process x 2 threads and by 2 ranks x 1 thread
# (`--nproc 2`), under GNU time: seconds, megapixels per second, peak resident memory of the
# largest process, the time rank 0 spends finishing the output (assembly, or the VRT and its
# renames) and its share of the wall time, and the scaling of 2 ranks against 1 process on the
# same cores. The model: unetsmall trained for one short epoch (speed_model.sh), or
# MODEL.pt.
# Usage: benchmarks/run_many_tiles_benchmark.sh BUILD_DIR [SIZE] [MODEL.pt]
set -euo pipefail
source "$(dirname "$(realpath "$0")")/preamble.sh"
source "$(dirname "$(realpath "$0")")/speed_model.sh"
build=$(realpath "${1:?usage: run_many_tiles_benchmark.sh BUILD_DIR [SIZE] [MODEL.pt]}")
size=${2:-5000}
bench_work bench-many-tiles
cd "$work"
window=256 overlap=25 batch=4
echo "== $(nproc) cores, $cpu; unetsmall, window $window, overlap $overlap%, batch $batch; ${size} x ${size} scene"
model=$(speed_model "$geodl" "${3:-}")
"$geodl" make-scene scene --size "$size" --seed 7 > /dev/null
/usr/bin/python3 - "$work/scene/scene_trn.tif" "$size" <<'EOF'
import os, sys
from osgeo import gdal
src, size = sys.argv[1], int(sys.argv[2])
for n in (10, 20):
    os.makedirs("tiles%d" % n)
    side = size // n
    for j in range(n):
        for i in range(n):
            gdal.Translate("tiles%d/t_%02d_%02d.tif" % (n, j, i), src, srcWin=[i * side, j * side, side, side],
                           creationOptions=["TILED=YES"])
gdal.BuildVRT("mosaic.vrt", sorted("tiles10/" + f for f in os.listdir("tiles10")))
EOF
args=(-q classify --model "$model" --window $window --overlap $overlap --batch-size $batch --probabilities)
# run NAME INPUT [FLAGS...]: "seconds peak-KiB" in NAME.time, the log in NAME.log; the output
# of a raster is NAME/c.tif, or NAME/c.vrt for a NAME that starts with "parts".
run() {
  local name=$1 input=$2
  shift 2
  local start
  start=$(date +%s.%N)
  if [ -d "$input" ]; then out=(--working-folder "$name");
  elif [ "${name#parts}" != "$name" ]; then out=(--output "$name/c.vrt");
  else out=(--output "$name/c.tif"); fi
  /usr/bin/time -f "%M" -o "$name.rss" "$geodl" "${args[@]}" --input "$input" "${out[@]}" "$@" > "$name.log" 2>&1 ||
    { cat "$name.log"; exit 1; }
  echo "$(echo "$(date +%s.%N) - $start" | bc) $(cat "$name.rss")" > "$name.time"
}
run vrt-one mosaic.vrt --threads 2
run vrt-two mosaic.vrt --threads 1 --nproc 2
run parts-one mosaic.vrt --threads 2
run parts-two mosaic.vrt --threads 1 --nproc 2
run tiles10-one tiles10 --threads 2
run tiles10-two tiles10 --threads 1 --nproc 2
run tiles20-one tiles20 --threads 2
run tiles20-two tiles20 --threads 1 --nproc 2
assembly=$(grep -o 'assembled the bands of 2 ranks in [0-9.]*' vrt-two.log | grep -o '[0-9.]*$' || echo 0)
echo
echo "| input | setup | seconds | Mpx/s | peak RSS, largest process (MiB) | 2 ranks / 1 process, same cores |"
echo "|---|---|---|---|---|---|"
for case in vrt parts tiles10 tiles20; do
  read -r one_s one_k < "$case-one.time"
  read -r two_s two_k < "$case-two.time"
  case $case in
    vrt) label="VRT of 10 x 10 tiles (one raster, bands) to a .tif" ;;
    parts) label="VRT of 10 x 10 tiles (one raster, bands) to a .vrt in place" ;;
    tiles10) label="folder of 10 x 10 tiles" ;;
    tiles20) label="folder of 20 x 20 tiles" ;;
  esac
  awk -v label="$label" -v mpx="$(echo "$size * $size / 1000000" | bc -l)" -v one="$one_s" -v two="$two_s" \
      -v ok="$one_k" -v tk="$two_k" 'BEGIN {
    printf "| %s | 1 process x 2 threads | %.1f | %.3f | %.0f | |\n", label, one, mpx / one, ok / 1024
    printf "| %s | 2 ranks x 1 thread | %.1f | %.3f | %.0f | %.0f%% |\n", label, two, mpx / two, tk / 1024, 100 * one / two }'
done
finishing=$(grep -o 'wrote the VRT over the parts of [0-9]* blocks in [0-9.]*' parts-two.log | grep -o '[0-9.]*$' || echo 0)
read -r vrt_two_s _ < vrt-two.time
read -r parts_two_s _ < parts-two.time
awk -v a="$assembly" -v t="$vrt_two_s" -v f="$finishing" -v p="$parts_two_s" 'BEGIN {
  printf "\nVRT to a .tif, 2 ranks: rank 0 assembled the bands in %.2f s, %.1f%% of the wall time\n", a, 100 * a / t
  printf "VRT to a .vrt in place, 2 ranks: rank 0 wrote the VRT and moved the parts in %.3f s, %.3f%% of the wall time\n", f, 100 * f / p }'
cmp_out=$(/usr/bin/python3 -c "
from osgeo import gdal
a, b = gdal.Open('vrt-one/c.tif'), gdal.Open('parts-two/c.vrt')
print('identical' if (a.ReadAsArray() == b.ReadAsArray()).all() else 'DIFFERENT')")
echo "the class raster of 2 ranks in place against 1 process's GeoTIFF: $cmp_out"
