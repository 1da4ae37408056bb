#!/usr/bin/env bash
# The classification benchmark, GeoDL and its PyTorch reference side by side in one run:
# the Massachusetts validation image (../shared/data) with the model of the training
# benchmark (building IoU against the ground truth), then generated 3-band scenes of
# 2000 x 2000 and 6000 x 6000 pixels: megapixels per second (reading to writing) and peak
# resident memory (GNU time), same architecture, window, overlap, batch and threads.
# Usage: benchmarks/run_classify_benchmark.sh BUILD_DIR [MODEL.pt] [SIZES...]
set -euo pipefail
source "$(dirname "$(realpath "$0")")/preamble.sh"
build=$(realpath "${1:?usage: run_classify_benchmark.sh BUILD_DIR [MODEL.pt] [SIZES...]}")
model=${2:-$build/bench-train/geodl/model.pt}
shift $(( $# >= 2 ? 2 : 1 ))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(2000 6000)
[ -f "$model" ] || { echo "no model at $model: run benchmarks/run_train_benchmark.sh first"; exit 1; }
window=256 overlap=25 batch=4
massachusetts_data
bench_work bench-classify
echo "== $(nproc) cores, $cpu; $threads threads; window $window, overlap $overlap%, batch $batch; model $model"
row() {  # name, input, then the peak memory and time of each side
  local name=$1 input=$2
  /usr/bin/time -f "%e %M" -o "$work/geodl.time" "$geodl" -q classify --input "$input" --model "$model" \
    --output "$work/geodl_$name.tif" --window $window --overlap $overlap --batch-size $batch \
    --threads "$threads" > /dev/null
  /usr/bin/time -f "%e %M" -o "$work/ref.time" /usr/bin/python3 "$here/reference/pytorch_classify.py" \
    "$input" "$work/ref_$name.tif" --bands 3 --classes 2 --window $window --overlap $overlap \
    --batch $batch --threads "$threads" > /dev/null
  local mpx
  mpx=$(/usr/bin/python3 -c "from osgeo import gdal; d = gdal.Open('$input'); print(d.RasterXSize * d.RasterYSize / 1e6)")
  read -r gs gk < "$work/geodl.time"
  read -r rs rk < "$work/ref.time"
  /usr/bin/python3 -c "
mpx, gs, gk, rs, rk = $mpx, $gs, $gk, $rs, $rk
print('| %s | %.2f | %.3f | %.0f | %.3f | %.0f | %.2fx |' % ('$name', mpx, mpx / gs, gk / 1024, mpx / rs, rk / 1024, (mpx / gs) / (mpx / rs)))"
}
echo
echo "| raster | Mpx | GeoDL Mpx/s | GeoDL peak MiB | reference Mpx/s | reference peak MiB | speed ratio |"
echo "|---|---|---|---|---|---|---|"
if [ -d "$data" ]; then
  row massachusetts_val "$data/23429155_15.tif"
fi
for size in "${sizes[@]}"; do
  "$geodl" make-scene "$work/scene$size" --size "$size" --seed 7 > /dev/null
  row "scene_${size}x${size}" "$work/scene$size/scene_trn.tif"
done
if [ -d "$data" ]; then
  echo
  echo "Building IoU of GeoDL's classification of the Massachusetts validation image:"
  "$geodl" -q evaluate "$work/geodl_massachusetts_val.tif" "$data/massachusetts_buildings.gpkg" --field class
fi
