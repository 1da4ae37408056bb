#!/usr/bin/env bash
# Classification memory against raster size: GeoDL's peak resident memory (GNU time) on a
# generated 2000 x 2000 scene and on a 20000 x 20000 raster made of 10 x 10 copies of it
# (a tiled, compressed GeoTIFF of 400 megapixels), same model, window, overlap, batch and
# threads. Streaming means the two peaks are close; a whole-raster tool needs ~30 bytes
# per pixel (the reference needs 2.5 GiB for 36 Mpx: run_classify_benchmark.sh).
# Usage: benchmarks/run_classify_memory.sh BUILD_DIR [MODEL.pt] [BIG_SIZE]
set -euo pipefail
source "$(dirname "$(realpath "$0")")/preamble.sh"
build=$(realpath "${1:?usage: run_classify_memory.sh BUILD_DIR [MODEL.pt] [BIG_SIZE]}")
model=${2:-$build/bench-train/geodl/model.pt}
big=${3:-20000}
[ -f "$model" ] || { echo "no model at $model: run benchmarks/run_train_benchmark.sh first"; exit 1; }
bench_work bench-memory
"$geodl" make-scene "$work/scene" --size 2000 --seed 7 > /dev/null
small=$work/scene/scene_trn.tif
# The big raster: a VRT repeating the small scene, written out as a real GeoTIFF.
/usr/bin/python3 - "$small" "$work/big.vrt" "$big" <<'PY'
import sys
from osgeo import gdal
src, vrt, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = gdal.Open(src)
w, h, n = d.RasterXSize, d.RasterYSize, d.RasterCount
gt = d.GetGeoTransform()
out = gdal.GetDriverByName('VRT').Create(vrt, size, size, 0)
out.SetGeoTransform(gt)
out.SetProjection(d.GetProjection())
for b in range(1, n + 1):
    out.AddBand(d.GetRasterBand(b).DataType)
    band = out.GetRasterBand(b)
    for y in range(0, size, h):
        for x in range(0, size, w):
            cw, ch = min(w, size - x), min(h, size - y)
            band.SetMetadataItem('source_%d_%d' % (x, y), f'''<SimpleSource><SourceFilename relativeToVRT="0">{src}</SourceFilename>
<SourceBand>{b}</SourceBand><SrcRect xOff="0" yOff="0" xSize="{cw}" ySize="{ch}"/>
<DstRect xOff="{x}" yOff="{y}" xSize="{cw}" ySize="{ch}"/></SimpleSource>''', 'new_vrt_sources')
out = None
gdal.Translate(vrt[:-4] + '.tif', vrt, creationOptions=['TILED=YES', 'COMPRESS=DEFLATE', 'BIGTIFF=YES'])
PY
echo "== $(nproc) cores, $cpu; $threads threads; window 256, overlap 25%, batch 4; model $model"
echo
echo "| raster | Mpx | GeoDL Mpx/s | GeoDL peak MiB |"
echo "|---|---|---|---|"
for input in "$small" "$work/big.tif"; do
  /usr/bin/time -f "%e %M" -o "$work/time" "$geodl" -q classify --input "$input" --model "$model" \
    --output "$work/out_$(basename "$input")" --window 256 --overlap 25 --batch-size 4 \
    --threads "$threads" > /dev/null
  read -r seconds kib < "$work/time"
  /usr/bin/python3 -c "
from osgeo import gdal
d = gdal.Open('$input'); mpx = d.RasterXSize * d.RasterYSize / 1e6
print('| %d x %d | %.0f | %.3f | %.0f |' % (d.RasterXSize, d.RasterYSize, mpx, mpx / $seconds, $kib / 1024))"
done
