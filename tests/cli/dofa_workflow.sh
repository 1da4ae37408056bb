#!/usr/bin/env bash
# DOFA on a 4-band raster whose bands carry their wavelengths (GDAL's IMAGERY metadata):
# samples (the store records the wavelengths) -> train dofa_base (no wavelengths given: the
# store's) -> info -> classify -> evaluate; then a raster whose bands carry other wavelengths
# (another band order) is refused naming the band, and classified with --accept-mismatch.
# Usage: dofa_workflow.sh GEODL SCENE_DIR
set -euo pipefail
geodl=$1 scene=$2
out=$scene/dofa_base
rm -rf "$out"
mkdir -p "$out"
# The scene's RGB and a fourth band (its red again), as red, green, blue, near infrared.
/usr/bin/python3 - "$scene" "$out" <<'PY'
import sys
from osgeo import gdal
scene, out = sys.argv[1:3]
def four(src, dst, wavelengths):
    s = gdal.Open(src)
    d = gdal.GetDriverByName("GTiff").Create(dst, s.RasterXSize, s.RasterYSize, 4, s.GetRasterBand(1).DataType)
    d.SetGeoTransform(s.GetGeoTransform())
    d.SetProjection(s.GetProjection())
    for b, w in enumerate(wavelengths, 1):
        band = d.GetRasterBand(b)
        band.WriteArray(s.GetRasterBand(min(b, 3) if b < 4 else 1).ReadAsArray())
        band.SetMetadataItem("CENTRAL_WAVELENGTH_UM", str(w), "IMAGERY")
    d = None
rgbn = (0.665, 0.56, 0.49, 0.842)
four(f"{scene}/scene_trn.tif", f"{out}/trn4.tif", rgbn)
four(f"{scene}/scene_val.tif", f"{out}/val4.tif", rgbn)
four(f"{scene}/scene_val.tif", f"{out}/bgrn4.tif", (0.49, 0.56, 0.665, 0.842))
PY
printf '%s\n' "trn4.tif,$scene/scene_trn_labels.gpkg,class,trn" "val4.tif,$scene/scene_val_labels.gpkg,class,val" \
  > "$out/four.csv"
"$geodl" -q samples "$scene/config.yaml" --samples-size 64 --number-of-bands 4 --data-path "$out" \
  --prep-csv-file "$out/four.csv"
"$geodl" info "$out/samples/trn_samples.hdf5" | grep -E "wavelengths \(micrometres\): 0.665 0.56 0.49 0.842"
"$geodl" -q train "$scene/config.yaml" --data-path "$out" --samples-size 64 --number-of-bands 4 --model dofa_base \
  --learning-rate 0.0003 --epochs 1 --batch-size 4 --threads 2 --seed 1 --num-trn-samples 8 --num-val-samples 4 \
  --output-path "$out/model"
"$geodl" info "$out/model/model.pt" | grep -E "^model: |^wavelengths"
"$geodl" -q classify --input "$out/val4.tif" --model "$out/model/model.pt" --output "$out/classes.tif" --threads 2
"$geodl" -q evaluate "$out/classes.tif" "$scene/scene_val_labels.gpkg"
set +e
"$geodl" -q classify --input "$out/bgrn4.tif" --model "$out/model/model.pt" --output "$out/bgrn_classes.tif" --threads 2
status=$?
set -e
[ "$status" -ne 0 ] || { echo "a raster with other wavelengths was classified"; exit 1; }
[ ! -e "$out/bgrn_classes.tif" ] || { echo "the refused classification wrote its output"; exit 1; }
"$geodl" -q classify --input "$out/bgrn4.tif" --model "$out/model/model.pt" --output "$out/bgrn_classes.tif" \
  --threads 2 --accept-mismatch
echo "dofa_base workflow: done"
