#!/usr/bin/env bash
# Classification and samples shared by ranks (1 thread each), against one process:
# - classify in bands of window rows with 2 and 3 ranks (`--nproc`), on a raster whose width
#   is not a multiple of the window, with nodata, an extent and a mask: the class raster and
#   the Byte probabilities byte for byte, Float32 probabilities within 1e-6, polygons and a
#   COG from the assembled raster; through torchrun too (skipped, saying so, without it);
#   resampled to the model's pixel size, shared in bands of the view;
# - in place: .vrt outputs over parts every rank writes (1, 2, 3 ranks), as one process's;
# - many rasters: whole rasters per rank (3 rasters, 2 ranks), bands of each (2 rasters,
#   3 ranks), every output identical; two that fail, refused, or skipped with --on-error skip;
# - samples with 2 ranks: the stores identical (every dataset and attribute) and the
#   footprints too;
# - faults: a rank killed with kill -9 mid-classification (the other stops within the
#   collective timeout, naming it), a rank stopped with SIGTERM (the other stops as
#   cancelled), a rank with another overlap refused by both: never an output, a part or a
#   temporary left; --rank/--world-size under a launcher refused.
# Usage: distributed_jobs.sh GEODL SCENE_FOLDER MODEL WORKDIR
set -euo pipefail
geodl=$(realpath "$1") scene=$(realpath "$2") model=$(realpath "$3") work=$4
rm -rf "$work" && mkdir -p "$work"
work=$(realpath "$work")
py=/usr/bin/python3
port() { $py -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
fail() { echo "FAILED: $*"; exit 1; }
# run NAME ARGS...: geodl, its output in $work/NAME.log; fails the test with it.
run() { local name=$1; shift; "$geodl" "$@" > "$work/$name.log" 2>&1 || { cat "$work/$name.log"; fail "$name"; }; }
# no_leftovers FOLDER: no part or temporary in it.
no_leftovers() {
  if find "$1" -name '*.rank-*' -o -name '*.tmp-*' -o -name '*.partial' | grep -q .; then find "$1" -ls; fail "leftovers in $1"; fi
}

# The inputs: a raster 230 x 250 (the window 64, stride 48: 230 is no multiple), a block of
# nodata, a mask polygon and an extent; three rasters for whole-raster sharing.
cd "$work"
$py - "$scene/scene_val.tif" <<'EOF'
import sys
import numpy as np
from osgeo import gdal, ogr, osr
src = gdal.Open(sys.argv[1])
gt = src.GetGeoTransform()
for name, w, h, x0 in (("odd", 230, 250, 0), ("r1", 200, 180, 10), ("r2", 120, 256, 40), ("r3", 256, 90, 0)):
    d = gdal.Translate(name + ".tif", src, srcWin=[x0, 0, w, h])
    if name == "odd":
        for b in range(1, d.RasterCount + 1):
            band = d.GetRasterBand(b)
            a = band.ReadAsArray()
            a[100:140, 60:110] = 0
            band.WriteArray(a)
            band.SetNoDataValue(0)
    d = None
srs = osr.SpatialReference(wkt=src.GetProjection())
ds = ogr.GetDriverByName("GPKG").CreateDataSource("mask.gpkg")
layer = ds.CreateLayer("mask", srs, ogr.wkbPolygon)
x, y, p = gt[0], gt[3], gt[1]
ring = "POLYGON((%f %f, %f %f, %f %f, %f %f))" % (x + 20 * p, y - 10 * p, x + 200 * p, y - 40 * p,
                                                   x + 180 * p, y - 240 * p, x + 10 * p, y - 200 * p)
f = ogr.Feature(layer.GetLayerDefn())
f.SetGeometry(ogr.CreateGeometryFromWkt(ring))
layer.CreateFeature(f)
ds = None
print("%f,%f,%f,%f" % (x + 5 * p, y - 235 * p, x + 215 * p, y - 15 * p), file=open("extent.txt", "w"))
EOF
mkdir -p many && mv r1.tif r2.tif r3.tif many/
mkdir -p two && cp many/r1.tif many/r2.tif two/
extent=$(cat extent.txt)
cat > compare.py <<'EOF'
import sys
import numpy as np
from osgeo import gdal
a, b, tolerance = gdal.Open(sys.argv[1]), gdal.Open(sys.argv[2]), float(sys.argv[3])
assert (a.RasterXSize, a.RasterYSize, a.RasterCount) == (b.RasterXSize, b.RasterYSize, b.RasterCount)
assert a.GetGeoTransform() == b.GetGeoTransform() and a.GetProjection() == b.GetProjection()
worst = max(float(np.abs(a.GetRasterBand(i).ReadAsArray().astype(np.float64) -
                         b.GetRasterBand(i).ReadAsArray().astype(np.float64)).max())
            for i in range(1, a.RasterCount + 1))
assert worst <= tolerance, "differ by %g" % worst
print("%s: within %g (largest difference %g)" % (sys.argv[2], tolerance, worst))
EOF
classify=(-q classify --model "$model" --window 64 --batch-size 2 --threads 1 --collective-timeout 5)
same() { cmp "$1" "$2" || fail "$2 differs from $1"; }

# 1. One raster in bands: plain (Byte probabilities), then extent + mask + nodata + Float32
# probabilities + polygons + COG.
run one-plain "${classify[@]}" --input odd.tif --output one/plain.tif --probabilities
run one-full "${classify[@]}" --input odd.tif --output one/full.tif --probabilities-float --polygons --cog \
  --extent "$extent" --mask mask.gpkg
grep -q "nodata: [1-9]" "$work/one-full.log" || fail "the full case has no nodata"
for n in 2 3; do
  run "r$n-plain" "${classify[@]}" --input odd.tif --output "r$n/plain.tif" --probabilities --nproc $n
  same one/plain.tif "r$n/plain.tif"
  same one/plain_probabilities.tif "r$n/plain_probabilities.tif"
  run "r$n-full" "${classify[@]}" --input odd.tif --output "r$n/full.tif" --probabilities-float --polygons --cog \
    --extent "$extent" --mask mask.gpkg --nproc $n
  same one/full.tif "r$n/full.tif"
  $py compare.py one/full_probabilities.tif "r$n/full_probabilities.tif" 1e-6
  [ "$(ogrinfo -al -q one/full_polygons.gpkg | md5sum)" = "$(ogrinfo -al -q "r$n/full_polygons.gpkg" | md5sum)" ] ||
    fail "the polygons of $n ranks differ"
  grep -q "assembled the bands of $n ranks in [0-9.]* s" "$work/r$n-full.log" || fail "no assembly time"
  # The same summary, but for the times of assembly and of the journal's writes.
  diff <(grep -v "journal for resume" "$work/one-full.log" | sed 's|/r[0-9]/|/X/|; s|/one/|/X/|') \
    <(grep -v "assembled the bands\|journal for resume" "$work/r$n-full.log" | sed 's|/r[0-9]/|/X/|; s|/one/|/X/|') ||
    fail "the summary of $n ranks differs"
  no_leftovers "r$n"
  echo "$n ranks (--nproc $n): class raster and Byte probabilities identical, Float32 within 1e-6, polygons and COG identical"
done
if command -v torchrun > /dev/null; then
  # --redirects 1 --tee 1: Debian 12's torchrun (torch 1.13 on Python 3.11) fails on its own
  # defaults (its Std flags parse "0" as nothing); these keep the output on the console.
  torchrun --no_python --redirects 1 --tee 1 --nproc_per_node 2 --master_port "$(port)" "$geodl" "${classify[@]}" \
    --input odd.tif --output torchrun/plain.tif --probabilities > torchrun.log 2>&1 || { cat torchrun.log; fail torchrun; }
  same one/plain.tif torchrun/plain.tif
  same one/plain_probabilities.tif torchrun/plain_probabilities.tif
  echo "torchrun --no_python --nproc_per_node 2: identical"
else
  echo "SKIPPED: torchrun is not installed (Debian's python3-torch has it): no torchrun check"
fi

# 1c. Written in place (.vrt outputs): every rank writes its band as a part beside the VRT and
# nothing is assembled; the VRTs read as one process's class raster (exactly) and Float32
# probabilities (within 1e-6), with its grid, CRS and nodata; the polygons, made by every rank
# from its part and merged along the borders, are the same. A run
# with another number of ranks replaces every part; a COG, resample and a parts folder holding
# a user's file are refused before anything is written.
cat > compare_grid.py <<'EOF2'
import sys
import numpy as np
from osgeo import gdal, osr
a, b, tolerance = gdal.Open(sys.argv[1]), gdal.Open(sys.argv[2]), float(sys.argv[3])
assert (a.RasterXSize, a.RasterYSize, a.RasterCount) == (b.RasterXSize, b.RasterYSize, b.RasterCount)
assert a.GetGeoTransform() == b.GetGeoTransform(), (a.GetGeoTransform(), b.GetGeoTransform())
assert osr.SpatialReference(wkt=a.GetProjection()).IsSame(osr.SpatialReference(wkt=b.GetProjection()))
for i in range(1, a.RasterCount + 1):
    x, y = a.GetRasterBand(i), b.GetRasterBand(i)
    assert x.GetNoDataValue() == y.GetNoDataValue() and x.GetDescription() == y.GetDescription(), i
    worst = float(np.abs(x.ReadAsArray().astype(np.float64) - y.ReadAsArray().astype(np.float64)).max())
    assert worst <= tolerance, "band %d differs by %g" % (i, worst)
if a.GetRasterBand(1).GetCategoryNames():
    assert a.GetRasterBand(1).GetCategoryNames() == b.GetRasterBand(1).GetCategoryNames()
print("%s: as %s within %g" % (sys.argv[2], sys.argv[1], tolerance))
EOF2
# Polygons of ranks: each polygonizes its part, rank 0 merges them along the parts' borders.
# The same polygons as one process (each equal to one of its, by class, name and area), and
# some of them cross a border between parts (so the merge is tested).
cat > same_polygons.py <<'EOF2'
import os, sys
from osgeo import gdal, ogr
def polygons(path):
    ds = ogr.Open(path)  # kept while its layer is read
    layer = ds.GetLayer(0)
    out = []
    for f in layer:
        c = f.GetGeometryRef().Centroid()
        out.append((f.GetField("class_id"), f.GetField("class_name"), round(f.GetField("area"), 6),
                    round(c.GetX(), 3), round(c.GetY(), 3), f.GetGeometryRef().ExportToWkt()))
    return sorted(out)
a, b = polygons(sys.argv[1]), polygons(sys.argv[2])
assert len(a) == len(b), "%d polygons against %d" % (len(a), len(b))
borders = []
for name in sorted(os.listdir(sys.argv[3])):
    if name.endswith(".tif"):
        d = gdal.Open(os.path.join(sys.argv[3], name))
        borders.append(d.GetGeoTransform()[3])
crossing = 0
for x, y in zip(a, b):
    assert x[:5] == y[:5], (x[:5], y[:5])
    gx, gy = ogr.CreateGeometryFromWkt(x[5]), ogr.CreateGeometryFromWkt(y[5])
    assert gx.Equals(gy) or gx.SymDifference(gy).Area() < 1e-9, (x[:5], x[5][:80], y[5][:80])
    env = gx.GetEnvelope()
    crossing += any(env[2] < yb < env[3] for yb in borders[1:])
assert crossing > 0, "no polygon crosses a border between parts"
print("%s: %d polygons as one process's, %d across the parts' borders" % (sys.argv[2], len(a), crossing))
EOF2
for n in 1 2 3; do
  run "vrt$n" "${classify[@]}" --input odd.tif --output "vrt$n/full.vrt" --probabilities-float --polygons \
    --extent "$extent" --mask mask.gpkg --nproc $n
  $py compare_grid.py one/full.tif "vrt$n/full.vrt" 0 > /dev/null || fail "the class VRT of $n ranks differs"
  $py compare_grid.py one/full_probabilities.tif "vrt$n/full_probabilities.vrt" 1e-6 > /dev/null ||
    fail "the probability VRT of $n ranks differs"
  if [ $n = 1 ]; then
    [ "$(ogrinfo -al -q one/full_polygons.gpkg | md5sum)" = "$(ogrinfo -al -q "vrt$n/full_polygons.gpkg" | md5sum)" ] ||
      fail "the polygons of the VRT of one process differ"
  else
    $py same_polygons.py one/full_polygons.gpkg "vrt$n/full_polygons.gpkg" "vrt$n/full_parts" ||
      fail "the polygons of the VRT of $n ranks differ"
  fi
  # One part per block of rows, whoever computed it, for the classes and the probabilities.
  blocks=$(grep -c '<SimpleSource>' "vrt$n/full.vrt")
  [ "$(ls "vrt$n/full_parts" | grep -c '^block-[0-9]*\.tif$')" = "$blocks" ] && [ "$blocks" -gt 3 ] ||
    { ls "vrt$n/full_parts"; fail "not $blocks parts"; }
  [ "$(ls "vrt$n/full_probabilities_parts" | grep -c '^block-[0-9]*\.tif$')" = "$blocks" ] ||
    fail "not $blocks probability parts"
  grep -q "wrote the VRT over the parts of $blocks blocks in [0-9.]* s" "vrt$n.log" || { cat "vrt$n.log"; fail "no VRT time"; }
  ! grep -q "assembled the bands" "vrt$n.log" || fail "the VRT of $n ranks was assembled"
  no_leftovers "vrt$n"
done
run vrt-again "${classify[@]}" --input odd.tif --output vrt2/full.vrt --probabilities-float --polygons \
  --extent "$extent" --mask mask.gpkg --nproc 3
$py compare_grid.py one/full.tif vrt2/full.vrt 0 > /dev/null || fail "the class VRT run again differs"
[ "$(ls vrt2/full_parts | grep -c '^block-[0-9]*\.tif$')" = "$(grep -c '<SimpleSource>' vrt2/full.vrt)" ] ||
  { ls vrt2/full_parts; fail "the parts of the run before stayed"; }
no_leftovers vrt2
for bad in --cog --resample; do
  code=0
  "$geodl" "${classify[@]}" --input odd.tif --output vrt-bad/c.vrt --nproc 2 $bad > vrt-bad.log 2>&1 || code=$?
  { [ $code = 3 ] && [ ! -e vrt-bad ] && grep -qE "gdal_translate -of COG|give a .tif output with resample" vrt-bad.log; } ||
    { cat vrt-bad.log; fail ".vrt with $bad: exit $code"; }
done
mkdir -p vrt-bad/c_parts && echo mine > vrt-bad/c_parts/notes.txt
code=0
"$geodl" "${classify[@]}" --input odd.tif --output vrt-bad/c.vrt --nproc 2 > vrt-bad.log 2>&1 || code=$?
{ [ $code = 3 ] && [ "$(ls -A vrt-bad)" = c_parts ] && [ "$(cat vrt-bad/c_parts/notes.txt)" = mine ] &&
  grep -q "holds 'notes.txt', a file GeoDL did not write there" vrt-bad.log; } ||
  { cat vrt-bad.log; ls -la vrt-bad; fail "a parts folder with a user's file: exit $code"; }
echo ".vrt outputs written in place by 1, 2 and 3 ranks: classes identical, Float32 within 1e-6, polygons identical, parts replaced"

# 1b. Resampled to the model's pixel size (--resample): odd.tif with pixels 1.5 times as large,
# classified through a view of 345 x 375 pixels shared in bands by 2 ranks; the outputs at the
# raster's grid (230 x 250) identical to one process's, no view output left.
cp odd.tif coarse.tif
$py -c "from osgeo import gdal; d = gdal.Open('coarse.tif', gdal.GA_Update); g = list(d.GetGeoTransform())
g[1] *= 1.5; g[5] *= 1.5; d.SetGeoTransform(g)"
mkdir -p rs-one rs-two
run rs-one "${classify[@]}" --input coarse.tif --output rs-one/c.tif --probabilities --polygons --resample
run rs-two "${classify[@]}" --input coarse.tif --output rs-two/c.tif --probabilities --polygons --resample --nproc 2
grep -q "resampled to the model's pixel size (bilinear): 230 x 250 pixels" rs-two.log || { cat rs-two.log; fail "not resampled"; }
same rs-one/c.tif rs-two/c.tif
same rs-one/c_probabilities.tif rs-two/c_probabilities.tif
[ "$(ogrinfo -al -q rs-one/c_polygons.gpkg | md5sum)" = "$(ogrinfo -al -q rs-two/c_polygons.gpkg | md5sum)" ] ||
  fail "the resampled polygons of 2 ranks differ"
$py -c "from osgeo import gdal; a, b = gdal.Open('coarse.tif'), gdal.Open('rs-two/c.tif')
assert (b.RasterXSize, b.RasterYSize) == (230, 250) and a.GetGeoTransform() == b.GetGeoTransform()" ||
  fail "the resampled outputs are not at the raster's grid"
no_leftovers rs-two
if find rs-one rs-two -name '*.model-grid*' | grep -q .; then find rs-one rs-two -ls; fail "a view output left"; fi
echo "resampled (--resample, 1.5x): 2 ranks identical to one process at the raster's grid"

# 2. Many rasters: whole rasters per rank (3 rasters, 2 ranks), bands of each (2, 3 ranks).
run many-one "${classify[@]}" --input many --working-folder many-one --probabilities
run many-two "${classify[@]}" --input many --working-folder many-two --probabilities --nproc 2
run few-one "${classify[@]}" --input two --working-folder few-one --probabilities
run few-three "${classify[@]}" --input two --working-folder few-three --probabilities --nproc 3
for r in r1 r2 r3; do
  same "many-one/${r}_inference.tif" "many-two/${r}_inference.tif"
  same "many-one/${r}_inference_probabilities.tif" "many-two/${r}_inference_probabilities.tif"
done
for r in r1 r2; do same "few-one/${r}_inference.tif" "few-three/${r}_inference.tif"; done
[ "$(grep -c ' -> ' many-two.log)" = 3 ] || { cat many-two.log; fail "rank 0 does not report every raster"; }
echo "3 rasters on 2 ranks (whole rasters) and 2 rasters on 3 ranks (bands): identical"
# The same 3 with two that fail (a GeoTIFF cut to its signature, one of 4 bands): refused
# naming the first and on_error; with --on-error skip, on 2 ranks and on one process, the
# others identical, the failed ones named in the summary, nothing of them written, exit 6.
mkdir -p bad && cp many/r1.tif many/r2.tif many/r3.tif bad/ && head -c 16 many/r1.tif > bad/r0_damaged.tif
gdal_translate -q -b 1 -b 2 -b 3 -b 1 many/r2.tif bad/r4_bands.tif
code=0
"$geodl" "${classify[@]}" --input bad --working-folder bad-stop > bad-stop.log 2>&1 || code=$?
{ [ $code = 4 ] && grep -q "r0_damaged.tif.*(or set the option on_error (inference.on_error, --on-error) to skip" bad-stop.log &&
  [ ! -e bad-stop ]; } || { cat bad-stop.log; fail "a damaged raster in a job: exit $code, not 4"; }
for n in 1 2; do
  code=0
  "$geodl" "${classify[@]}" --input bad --working-folder "bad-skip$n" --probabilities --on-error skip --nproc $n \
    > "bad-skip$n.log" 2>&1 || code=$?
  [ $code = 6 ] || { cat "bad-skip$n.log"; fail "--on-error skip on $n ranks: exit $code, not 6"; }
  for r in r1 r2 r3; do
    same "many-one/${r}_inference.tif" "bad-skip$n/${r}_inference.tif"
    same "many-one/${r}_inference_probabilities.tif" "bad-skip$n/${r}_inference_probabilities.tif"
  done
  [ "$(ls "bad-skip$n" | grep -vc "^r[123]_")" = 0 ] || { ls "bad-skip$n"; fail "outputs of a skipped raster"; }
  { grep -q "^job: 3 of 5 rasters classified" "bad-skip$n.log" && grep -q "^2 skipped (on_error: skip):" "bad-skip$n.log" &&
    grep -q "^  .*r0_damaged.tif: " "bad-skip$n.log" && grep -q "^  .*r4_bands.tif: .* has 4 bands" "bad-skip$n.log"; } ||
    { cat "bad-skip$n.log"; fail "the summary of $n ranks does not name the skipped rasters"; }
  no_leftovers "bad-skip$n"
done
echo "--on-error skip: 2 failed rasters of 5 named and skipped, the others identical (1 and 2 ranks), exit 6"

# 3. Samples with 2 ranks against one process.
# The scene's inputs only (other tests write their outputs beside them).
mkdir samples-scene && cp "$scene"/scene_*.tif "$scene"/scene_*.gpkg "$scene"/*.csv "$scene/config.yaml" samples-scene/
(cd samples-scene && rm -rf samples && "$geodl" -q samples config.yaml --samples-size 64 --samples-dist 40 > ../samples-one.log 2>&1 &&
  mv samples samples-one && "$geodl" -q samples config.yaml --samples-size 64 --samples-dist 40 --nproc 2 > ../samples-two.log 2>&1) ||
  { cat samples-one.log samples-two.log; fail samples; }
cat > compare_stores.py <<'EOF'
import sys
import h5py
import numpy as np
def objects(f):
    out = {"/": f}
    f.visititems(lambda name, o: out.__setitem__(name, o))
    return out
with h5py.File(sys.argv[1]) as fa, h5py.File(sys.argv[2]) as fb:
    a, b = objects(fa), objects(fb)
    assert sorted(a) == sorted(b), (sorted(a), sorted(b))
    for name in a:
        if isinstance(a[name], h5py.Dataset):
            assert np.array_equal(a[name][()], b[name][()]), name
        assert sorted(a[name].attrs) == sorted(b[name].attrs), name
        for key in a[name].attrs:
            assert np.array_equal(np.asarray(a[name].attrs[key]), np.asarray(b[name].attrs[key])), (name, key)
    print("%s: identical (%d samples)" % (sys.argv[2], fa["sat_img"].shape[0]))
EOF
for split in trn val; do
  $py compare_stores.py "samples-scene/samples-one/${split}_samples.hdf5" "samples-scene/samples/${split}_samples.hdf5"
done
[ "$(ogrinfo -al -q samples-scene/samples-one/samples_footprint.gpkg | md5sum)" = \
  "$(ogrinfo -al -q samples-scene/samples/samples_footprint.gpkg | md5sum)" ] || fail "the footprints differ"
diff <(sed 's|samples-one|samples|' samples-one.log) samples-two.log || fail "the samples summaries differ"
no_leftovers samples-scene
echo "samples on 2 ranks: stores and footprints identical to one process's"

# 4. Faults. ranks NAME ARGS...: ranks 0 and 1 with torchrun's variables, logs NAME-RANK.log.
ranks() {
  local name=$1 p; shift; p=$(port); pids=()
  for rank in 0 1; do
    RANK=$rank WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p "$geodl" "$@" > "$work/$name-$rank.log" 2>&1 &
    pids+=($!)
  done
}
# A raster large enough to be killed in the middle of (about 10 s on 2 ranks of 1 thread).
# (Its pixels keep odd.tif's size, the model's: a finer raster would be refused as unlike the
# training data.)
gdal_translate -q -outsize 1200 1200 odd.tif big.tif
/usr/bin/python3 -c "
from osgeo import gdal
odd, big = gdal.Open('odd.tif'), gdal.Open('big.tif', gdal.GA_Update)
g, o = list(big.GetGeoTransform()), odd.GetGeoTransform()
g[1], g[5] = o[1], o[5]
big.SetGeoTransform(g)"
long=("${classify[@]}" --input big.tif --probabilities)
# Larger than GDAL's block cache holds: the assembled files are byte for byte one process's
# only when rank 0 writes the rows in the blocks one process writes.
run big-one "${long[@]}" --output big-one/c.tif
run big-two "${long[@]}" --output big-two/c.tif --nproc 2
same big-one/c.tif big-two/c.tif
same big-one/c_probabilities.tif big-two/c_probabilities.tif
echo "1200 x 1200 on 2 ranks: class raster and probabilities identical"
# started NAME: waits until the ranks have finished a block (its mark is in the journal).
started() {
  for _ in $(seq 1 1000); do
    find "$work/$1" -name 'block-*.json' 2>/dev/null | grep -q . && { sleep 1; return; }
    sleep 0.02
  done
  fail "$1 never started"
}
# resumed NAME: the job stopped kept its finished blocks, said so, and resumes on 2 ranks to
# the bytes of the uninterrupted run.
resumed() {
  [ "$(ls -A "$1" | LC_ALL=C sort | tr '\n' ' ')" = "$2" ] || { ls -la "$1"; fail "$1: the stopped job left other files"; }
  grep -q "run it again with the option resume" "$1-0.log" || { cat "$1-0.log"; fail "$1: no word of resume"; }
  run "$1-resumed" "${long[@]}" --output "$1/c.tif" --nproc 2 --resume
  grep -q "resuming: [1-9][0-9]* of" "$1-resumed.log" || { cat "$1-resumed.log"; fail "$1: nothing resumed"; }
  same big-two/c.tif "$1/c.tif"
  same big-two/c_probabilities.tif "$1/c_probabilities.tif"
}
mkdir -p killed && cp one/plain.tif killed/c.tif  # an earlier run's output
old=$(sha256sum < killed/c.tif)
ranks killed "${long[@]}" --output killed/c.tif
started killed
kill -9 "${pids[1]}"
start=$(date +%s)
code=0; wait "${pids[0]}" || code=$?
seconds=$(( $(date +%s) - start ))
wait "${pids[1]}" 2>/dev/null || true
[ "$code" -ne 0 ] || fail "rank 0 went on after rank 1 was killed"
[ "$seconds" -le 15 ] || fail "rank 0 took $seconds s to stop (collective timeout 5 s)"
grep -q "rank 1 stopped answering (died or hung)" killed-0.log || { cat killed-0.log; fail "no message naming rank 1"; }
[ "$(sha256sum < killed/c.tif)" = "$old" ] || fail "the previous output was replaced"
resumed killed ".c.tif.partial .c_probabilities.tif.partial c.tif "
echo "rank 1 killed: rank 0 stopped after $seconds s with exit code $code, naming rank 1; the old output kept until the resume gave the uninterrupted run's"

ranks stopped "${long[@]}" --output stopped/c.tif
started stopped
kill -TERM "${pids[1]}"
code0=0; wait "${pids[0]}" || code0=$?
code1=0; wait "${pids[1]}" || code1=$?
[ "$code0" = 5 ] && [ "$code1" = 5 ] || { cat stopped-*.log; fail "SIGTERM: exit codes $code0 and $code1, not 5"; }
grep -q "rank 1 was cancelled" stopped-0.log || { cat stopped-0.log; fail "rank 0 does not say why it stopped"; }
resumed stopped ".c.tif.partial .c_probabilities.tif.partial "
echo "rank 1 stopped with SIGTERM: both ranks exit 5; resumed to the uninterrupted run's bytes"

p=$(port)
RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p "$geodl" "${classify[@]}" --input odd.tif --output mismatch/c.tif > mismatch-0.log 2>&1 &
pid0=$!
code1=0
RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p "$geodl" "${classify[@]}" --input odd.tif --output mismatch/c.tif --overlap 10 \
  > mismatch-1.log 2>&1 || code1=$?
code0=0; wait $pid0 || code0=$?
[ "$code0" -ne 0 ] && [ "$code1" -ne 0 ] || fail "a mismatched rank was not refused"
for rank in 0 1; do
  grep -q "rank 1 would classify another job than rank 0: its overlap is 6, rank 0's 16" "mismatch-$rank.log" ||
    { cat "mismatch-$rank.log"; fail "rank $rank: no mismatch message"; }
done
[ -z "$(ls -A mismatch 2>/dev/null)" ] || fail "a refused job left files"
echo "a rank with another overlap: refused by both, naming it"

code=0
"$geodl" -q samples samples-scene/config.yaml --samples-size 64 --rank 1 --world-size 2 --nproc 2 > manual.log 2>&1 || code=$?
[ "$code" -ne 0 ] && grep -q "make one shard by hand" manual.log || { cat manual.log; fail "--rank under a launcher"; }
echo "distributed jobs: every check passed"
