#!/usr/bin/env bash
# Bad inputs, one case per class of issue 12 and the older ones: each case asserts the exit
# code, a keyword of the message, that the inputs are byte-identical (digests) and that the
# outputs folder holds exactly what it held before. With qgis_process, the same classes
# through the Processing algorithms. Prints the figures: cases, crashes (a signal), hangs
# (over 120 s), leftovers, inputs changed, and messages that name a fix.
# Usage: bad_inputs.sh GEODL SCENE WORKDIR [PLUGIN_DIR]
set -uo pipefail
geodl=$(realpath "$1") scene=$(realpath "$2") work=$3 plugin_dir=${4:+$(realpath "$4")}
here=$(dirname "$(realpath "$0")")
rm -rf "$work" && mkdir -p "$work/in" "$work/out"
work=$(realpath "$work")
in=$work/in out=$work/out
cd "$in" || exit 1

# The inputs: the scene, a store, a model with its checkpoint, and damaged or odd copies.
cp "$scene"/scene_*.tif "$scene"/scene_*.gpkg "$scene/scene.csv" "$scene/config.yaml" .
cp -r "$scene/samples" samples
"$geodl" -q train config.yaml --samples-size 64 --epochs 1 --batch-size 4 --threads 2 --output-path model \
  > /dev/null 2>&1 || { echo "setup: training failed"; exit 1; }
/usr/bin/python3 - <<'PY' || { echo "setup failed"; exit 1; }
import os, shutil
from osgeo import gdal
data = bytearray(open('model/model.pt', 'rb').read())
# One bit flipped in the middle of the largest record (the weights).
data[len(data) // 2] ^= 0x10
open('flipped.pt', 'wb').write(data)
open('cut_checkpoint.pt', 'wb').write(open('model/last_checkpoint.pt', 'rb').read()[:100000])
open('garbage.hdf5', 'wb').write(b'\x89HDF\r\n\x1a\n' + os.urandom(3000))
open('cut.hdf5', 'wb').write(open('samples/trn_samples.hdf5', 'rb').read()[:5000])
open('empty.yaml', 'w').close()
open('list.yaml', 'w').write('- a\n- b\n')
shutil.copy('samples/trn_samples.hdf5', 'store.pt')
open('broken.yaml', 'w').write('global: [unclosed\n')
# Aliases nested in aliases, 9 levels of 10: a billion values once expanded.
bomb = 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n'
for i in range(1, 10):
    bomb += 'a%d: &a%d [%s]\n' % (i, i, ', '.join(['*a%d' % (i - 1)] * 10))
open('bomb.yaml', 'w').write(bomb + 'global:\n  samples_size: 64\n')
open('twice.yaml', 'w').write(open('config.yaml').read() + 'global:\n  samples_size: 32\n')
import yaml
for name, weights in (('negative_weight', [1, -1, 1, 1, 1]), ('zero_weights', [0, 0, 0, 0, 0])):
    c = yaml.safe_load(open('config.yaml'))
    c['training']['class_weights'] = weights
    yaml.safe_dump(c, open(name + '.yaml', 'w'))
open('repeated.csv', 'w').write(open('scene.csv').read() + open('scene.csv').read().splitlines()[0] + '\n')
open('bom.csv', 'w', encoding='utf-8-sig').write(open('scene.csv').read())
open('samples_1e9.yaml', 'w').write(open('config.yaml').read().replace('samples_size: 128', 'samples_size: 1e9'))
gdal.Translate('float.tif', 'scene_val.tif', outputType=gdal.GDT_Float32)
gdal.Translate('tiny.tif', 'scene_val.tif', srcWin=[0, 0, 1, 1])
shutil.copy('scene_val.tif', 'c_probabilities.tif')
open('tiny.csv', 'w').write('tiny.tif,scene_val_labels.gpkg,class,trn\ntiny.tif,scene_val_labels.gpkg,class,val\n')
open('float.csv', 'w').write('float.tif,scene_val_labels.gpkg,class,val\nscene_trn.tif,scene_trn_labels.gpkg,class,trn\n')
open('missing.csv', 'w').write('scene_val.tif\nnot_there.tif\n')
open('bad.csv', 'w').write('scene_trn.tif;scene_trn_labels.gpkg\n')
# Ground truth whose classes do not fit in a byte, or are not whole numbers.
from osgeo import ogr, osr
gt = gdal.Open('scene_trn.tif').GetGeoTransform()
srs = osr.SpatialReference(wkt=gdal.Open('scene_trn.tif').GetProjection())
def vector(name, field_type, values):
    ds = ogr.GetDriverByName('GPKG').CreateDataSource(name)
    layer = ds.CreateLayer('truth', srs, ogr.wkbPolygon)
    layer.CreateField(ogr.FieldDefn('class', field_type))
    for i, v in enumerate(values):
        x, y = gt[0] + (i % 16) * 8 * gt[1], gt[3] + (i // 16) * 8 * gt[5]
        f = ogr.Feature(layer.GetLayerDefn())
        f.SetField('class', v)
        f.SetGeometry(ogr.CreateGeometryFromWkt('POLYGON ((%f %f, %f %f, %f %f, %f %f, %f %f))' % (
            x, y, x + 4 * gt[1], y, x + 4 * gt[1], y + 4 * gt[5], x, y + 4 * gt[5], x, y)))
        layer.CreateFeature(f)
    ds = None
vector('classes256.gpkg', ogr.OFTString, ['c%03d' % i for i in range(256)])
vector('fractional.gpkg', ogr.OFTReal, [1, 2, 2.5, 1])
for name in ('classes256', 'fractional'):
    open(name + '.csv', 'w').write('scene_trn.tif,%s.gpkg,class,trn\nscene_val.tif,scene_val_labels.gpkg,class,val\n' % name)
gdal.Translate('small.tif', 'scene_val.tif', srcWin=[0, 0, 200, 200])
open('small.csv', 'w').write('small.tif,scene_val_labels.gpkg,class,trn\n')
# Stores: one whose metadata says 256 classes (the last would be the ignore index 255), and
# one with 5000 bytes of its first samples overwritten.
import h5py
for split in ('trn', 'val'):
    shutil.copy('samples/%s_samples.hdf5' % split, 'classes256_%s.hdf5' % split)
    with h5py.File('classes256_%s.hdf5' % split, 'a') as f:
        f.attrs['num_classes'] = 256
shutil.copy('samples/trn_samples.hdf5', 'damaged.hdf5')
with h5py.File('damaged.hdf5', 'r') as f:
    at = f['sat_img'].id.get_chunk_info(0).byte_offset
with open('damaged.hdf5', 'r+b') as f:
    f.seek(at)
    f.write(b'\x5a' * 5000)
# Users' files at names GeoDL derives: a GeoPackage where the polygons of scene_val go, a
# zip (not a GeoDL model) where a training writes model.pt.
os.makedirs('wf')
shutil.copy('scene_val_labels.gpkg', 'wf/scene_val_inference_polygons.gpkg')
import zipfile
os.makedirs('notmine')
with zipfile.ZipFile('notmine/model.pt', 'w') as z:
    z.writestr('archive/data.pkl', b'a state dict of someone else')
# A raster whose first tile is overwritten (libtiff fails to inflate it), a GeoJSON in metres
# without a "crs" member (WGS 84 by its standard), and a folder where the prep CSV goes.
tiff = gdal.Open('scene_val.tif')
band = tiff.GetRasterBand(1)
at, size = int(band.GetMetadataItem('BLOCK_OFFSET_0_0', 'TIFF')), int(band.GetMetadataItem('BLOCK_SIZE_0_0', 'TIFF'))
band = tiff = None
data = bytearray(open('scene_val.tif', 'rb').read())
data[at:at + size] = b'\x5a' * size
open('damaged.tif', 'wb').write(data)
gdal.VectorTranslate('metres.geojson', 'scene_trn_labels.gpkg', format='GeoJSON', layerCreationOptions=['RFC7946=NO'])
import json
geojson = json.load(open('metres.geojson'))
geojson.pop('crs', None)
json.dump(geojson, open('metres.geojson', 'w'))
open('metres.csv', 'w').write('scene_trn.tif,metres.geojson,class,trn\nscene_val.tif,scene_val_labels.gpkg,class,val\n')
# Imagery unlike the model's training data: pixels 3x as large, a CRS in degrees, 16 bits.
gt = gdal.Open('scene_val.tif').GetGeoTransform()
coarse = gdal.Translate('coarse.tif', 'scene_val.tif')
coarse.SetGeoTransform([gt[0], gt[1] * 3, 0, gt[3], 0, gt[5] * 3])
coarse = None
gdal.Translate('degrees.tif', 'scene_val.tif', outputSRS='EPSG:4326', outputBounds=[-73.5, 45.6, -73.49, 45.59])
gdal.Translate('u16.tif', 'scene_val.tif', outputType=gdal.GDT_UInt16)
os.makedirs('csv_folder')
os.makedirs('edited_scene')
open('edited_scene/config.yaml', 'w').write(open('config.yaml').read() + '# my notes\n')
PY
"$geodl" -q samples config.yaml --prep-csv-file float.csv --samples-size 64 --data-path float_store \
  > /dev/null 2>&1 || { echo "setup: the Float32 store failed"; exit 1; }
mkdir -p a b && cp scene_val.tif a/x.tif && cp scene_val.tif b/x.tif
ln -s scene_val.tif link.tif
printf 'a/x.tif\nb/x.tif\n' > same_names.csv

long=$(printf 'n%.0s' $(seq 1 240))
model=$in/model/model.pt
cases=0 failures=0 crashes=0 hangs=0 leftovers=0 changed=0 with_fix=0
fix_words='check|give|use|set|choose|lower|raise|create|remove|train|copy|run|free|declare|turn|add|fix|rename|make|install|delete|move|convert|point'
# QGIS writes band statistics to NAME.aux.xml beside a raster it loads as a layer (any
# algorithm's input, e.g. gdal:cliprasterbyextent's): those sidecars are QGIS's, not
# GeoDL's, and are left out for the qgis_process cases (qgis=1).
digests() { (cd "$work" && find in \( -type f -o -type l \) | sort |
  { if [ "${qgis:-}" = 1 ]; then grep -v '\.aux\.xml$'; else cat; fi; } | xargs -d '\n' b2sum 2>/dev/null); }
listing() { (cd "$out" && find . | sort); }
# The inputs' digests as the last case left them: each case compares against them once.
inputs=""

# case NAME CODE KEYWORD COMMAND...: the exit code, the keyword, nothing written, inputs intact.
case_() {
  local name=$1 want=$2 keyword=$3; shift 3
  [ -n "$inputs" ] || inputs=$(digests)
  local before_out; before_out=$(listing)
  timeout 120 "$@" > "$work/$name.log" 2>&1
  local code=$?
  cases=$((cases + 1))
  local problem=""
  if [ $code = 124 ]; then hangs=$((hangs + 1)); problem="hang"; fi
  if [ $code -ge 128 ] && [ $code != 124 ]; then crashes=$((crashes + 1)); problem="crash (signal $((code - 128)))"; fi
  [ -z "$problem" ] && [ "$code" != "$want" ] && problem="exit code $code, expected $want"
  [ -z "$problem" ] && ! grep -qiF -- "$keyword" "$work/$name.log" && problem="no '$keyword' in the message"
  if [ "$(listing)" != "$before_out" ]; then leftovers=$((leftovers + 1)); problem="$problem; left in out: $(listing | tr '\n' ' ')"; fi
  local now; now=$(digests)
  if [ "$now" != "$inputs" ]; then
    changed=$((changed + 1)); problem="$problem; an input changed"; inputs=$now
  fi
  # The message: GeoDL's error lines, or all the output (CLI11's own errors).
  local message; message=$(grep -E "error|ERROR" "$work/$name.log")
  [ -z "$message" ] && message=$(cat "$work/$name.log")
  echo "$message" | grep -qiE "$fix_words" && with_fix=$((with_fix + 1))
  message=$(echo "$message" | head -1)
  if [ -n "$problem" ]; then
    failures=$((failures + 1))
    echo "FAIL $name: $problem"; tail -3 "$work/$name.log" | sed 's/^/    /'
  else
    echo "ok   $name ($code): ${message:0:150}"
  fi
}

g=("$geodl" -q)
cls=("${g[@]}" classify --threads 2)  # cases add --model
# Data loss: no output replaces an input, however spelt; nor a file of another kind.
case_ output_is_input 3 "never writes over a file the job reads" "${cls[@]}" --model "$model" --input scene_val.tif --output scene_val.tif
case_ output_is_input_dotdot 3 "never writes over a file the job reads" "${cls[@]}" --model "$model" --input scene_val.tif --output "$in/a/../scene_val.tif"
case_ output_is_input_symlink 3 "never writes over a file the job reads" "${cls[@]}" --model "$model" --input scene_val.tif --output link.tif
case_ probabilities_name_is_input 3 "never writes over a file the job reads" "${cls[@]}" --model "$model" --input c_probabilities.tif --output c.tif --probabilities
case_ output_over_geopackage 3 "GeoPackage" "${cls[@]}" --model "$model" --input scene_val.tif --output scene_val_labels.gpkg
case_ output_is_model 3 "never writes over a file the job reads" "${cls[@]}" --model "$model" --input scene_val.tif --output "$model"
case_ output_over_another_model 3 "does not replace it" "${cls[@]}" --model "$model" --input scene_val.tif --output flipped.pt
case_ footprint_is_labels 3 "never writes over a file the job reads" "${g[@]}" samples config.yaml --samples-size 64 --data-path "$out/s" \
  --footprint scene_trn_labels.gpkg
case_ two_rasters_one_output 3 "are the same file" "${cls[@]}" --model "$model" --img-csv-file same_names.csv --working-folder "$out/c"
case_ train_model_is_pretrained 3 "never writes over a file the job reads" "${g[@]}" train config.yaml --samples-size 64 --epochs 1 --batch-size 4 \
  --output-path model --pretrained model/model.pt
# Absurd values: a range in plain numbers, before anything is allocated or started.
case_ window_100000 3 "window" "${cls[@]}" --model "$model" --input scene_val.tif --output "$out/c.tif" --window 100000
case_ threads_100000 2 "from 0 to" "${cls[@]}" --model "$model" --input scene_val.tif --output "$out/c.tif" --threads 100000
case_ threads_negative 2 "is not a whole number from 0 to" "${cls[@]}" --model "$model" --input scene_val.tif --output "$out/c.tif" --threads -1
case_ batch_lots 2 "is not a whole number" "${g[@]}" train config.yaml --batch-size lots --output-path "$out/m"
case_ overlap_60 2 "from -1 to 49" "${cls[@]}" --model "$model" --input scene_val.tif --output "$out/c.tif" --overlap 60
case_ samples_size_1e9 3 "not a whole number from 8 to 100000" "${g[@]}" samples samples_1e9.yaml --data-path "$out/s"
case_ batch_size_under_tiny_budget 3 "not even one sample of 64 pixels fits the budget of 1 MiB" "${g[@]}" batch-size \
  --model unetsmall --sample-size 64 --budget-mib 1 --threads 1
case_ samples_size_flag 2 "from 8 to 100000" "${g[@]}" samples config.yaml --samples-size 1000000000 --data-path "$out/s"
case_ raster_1x1 3 "smaller than the smallest sample" "${g[@]}" samples config.yaml --prep-csv-file tiny.csv --data-path "$out/s"
case_ sample_bigger_than_raster 3 "use a sample size of at most 256" "${g[@]}" samples config.yaml --samples-size 300 --data-path "$out/s"
# Damaged and wrong files: the message names what the file is.
# Imagery unlike the training data: refused, naming what differs, the fix and the override.
case_ pixels_3x_larger 3 "(3 times larger)" "${cls[@]}" --model "$model" --input coarse.tif --output "$out/c.tif"
case_ crs_in_degrees 3 "is in a CRS in degrees but the model was trained on imagery in metres" "${cls[@]}" \
  --model "$model" --input degrees.tif --output "$out/c.tif"
case_ resample_degrees 3 "pixel sizes in the two do not compare; reproject the raster (gdalwarp -t_srs)" "${cls[@]}" \
  --model "$model" --input degrees.tif --output "$out/c.tif" --resample --accept-mismatch
case_ uint16_for_byte_model 3 "--accept-mismatch" "${cls[@]}" --model "$model" --input u16.tif --output "$out/c.tif"
case_ flipped_weights 3 "is damaged" "${cls[@]}" --input scene_val.tif --output "$out/c.tif" --model flipped.pt
case_ store_as_model 3 "is a sample store" "${cls[@]}" --input scene_val.tif --output "$out/c.tif" --model samples/trn_samples.hdf5
case_ folder_as_model 3 "is a folder" "${cls[@]}" --input scene_val.tif --output "$out/c.tif" --model samples
case_ missing_model 3 "cannot read the model file" "${cls[@]}" --input scene_val.tif --output "$out/c.tif" --model nothing.pt
case_ config_as_model 3 "not a model file" "${cls[@]}" --input scene_val.tif --output "$out/c.tif" --model config.yaml
case_ garbage_hdf5_info 4 "damaged or truncated" "${g[@]}" info garbage.hdf5
case_ truncated_hdf5_info 4 "damaged or truncated" "${g[@]}" info cut.hdf5
case_ truncated_store_train 3 "damaged or truncated" "${g[@]}" train --train-store cut.hdf5 \
  --val-store samples/val_samples.hdf5 --output-path "$out/m" --epochs 1
mkdir -p "$out/r" && cp cut_checkpoint.pt "$out/r/last_checkpoint.pt"
case_ truncated_checkpoint_resume 3 "cannot resume from the checkpoint" "${g[@]}" train config.yaml --samples-size 64 \
  --epochs 2 --batch-size 4 --output-path "$out/r" --resume
case_ nothing_to_resume 3 "nothing to resume" "${g[@]}" train config.yaml --samples-size 64 --epochs 2 --batch-size 4 \
  --output-path "$out/none" --resume
case_ store_as_raster 3 "not a raster" "${cls[@]}" --model "$model" --input samples/trn_samples.hdf5 --output "$out/c.tif"
case_ vector_as_raster 4 "cannot open as a raster" "${cls[@]}" --model "$model" --input scene_val_labels.gpkg --output "$out/c.tif"
case_ raster_as_mask 4 "cannot open as a vector" "${cls[@]}" --model "$model" --input scene_val.tif --output "$out/c.tif" --mask scene_val.tif
case_ byte_and_float_stores 3 "holds Byte pixels and the validation store Float32" "${g[@]}" train \
  --train-store samples/trn_samples.hdf5 --val-store float_store/samples/val_samples.hdf5 --output-path "$out/m" --epochs 1
case_ damaged_store_train 3 "is damaged: its dataset 'sat_img'" "${g[@]}" train --train-store damaged.hdf5 \
  --val-store samples/val_samples.hdf5 --output-path "$out/m" --epochs 1
case_ store_256_classes 3 "but its ignore index is 255, one of them" "${g[@]}" train --train-store classes256_trn.hdf5 \
  --val-store classes256_val.hdf5 --output-path "$out/m" --epochs 1
case_ labels_256_string_classes 3 "has 256 string classes, numbered from 1, but only 254 fit" "${g[@]}" samples config.yaml \
  --prep-csv-file classes256.csv --samples-size 64 --num-classes 0 --data-path "$out/s"
case_ labels_fractional_class 3 "class ids are whole numbers" "${g[@]}" samples config.yaml --prep-csv-file fractional.csv \
  --samples-size 64 --num-classes 0 --data-path "$out/s"
case_ percent_split_small_raster 3 "gave every window to validation" "${g[@]}" samples config.yaml --prep-csv-file small.csv \
  --samples-size 64 --val-percent 20 --data-path "$out/s"
case_ make_scene_over_edited_config 3 "is not the one make-scene writes" "${g[@]}" make-scene --size 64 "$in/edited_scene"
case_ truncated_model_classify 3 "is a LibTorch archive that is damaged or truncated" "${cls[@]}" --model cut_checkpoint.pt \
  --input scene_val.tif --output "$out/c.tif"
case_ damaged_store_info 3 "is damaged: its dataset 'sat_img'" "${g[@]}" info damaged.hdf5
case_ damaged_raster 4 "is damaged or truncated, or its disk failed" "${cls[@]}" --model "$model" --input damaged.tif \
  --output "$out/c.tif"
case_ geojson_in_metres_without_crs 3 "which are not degrees" "${g[@]}" samples config.yaml --prep-csv-file metres.csv \
  --samples-size 64 --data-path "$out/s"
case_ prep_csv_is_a_folder 3 "is a folder, not a file" "${g[@]}" samples config.yaml --prep-csv-file csv_folder \
  --samples-size 64 --data-path "$out/s"
case_ input_name_too_long 4 "file name too long; choose a shorter name" "${cls[@]}" --model "$model" \
  --input "$long$long.tif" --output "$out/c.tif"
case_ store_sample_size 3 "samples_size" "${g[@]}" train config.yaml --samples-size 128 --epochs 1 --output-path "$out/m"
# Config files and CSVs.
case_ unknown_subcommand 2 "unknown subcommand 'frobnicate'" "${g[@]}" frobnicate
case_ empty_config 3 "is empty" "${g[@]}" samples empty.yaml
case_ list_config 3 "but a list" "${g[@]}" samples list.yaml
case_ broken_yaml 3 "broken.yaml" "${g[@]}" samples broken.yaml
case_ yaml_alias_bomb 3 "expands to more than 100000 values" "${g[@]}" samples bomb.yaml
case_ yaml_key_twice 3 "gives global twice" "${g[@]}" samples twice.yaml
mkfifo "$work/fifo.yaml"
case_ config_is_a_fifo 3 "not a regular file" "${g[@]}" samples "$work/fifo.yaml"
case_ missing_config 4 "does not exist" "${g[@]}" samples config.yml
case_ csv_missing_raster 4 "not_there.tif" "${cls[@]}" --model "$model" --img-csv-file missing.csv --working-folder "$out/c"
case_ csv_malformed 3 "bad.csv" "${g[@]}" samples config.yaml --prep-csv-file bad.csv --data-path "$out/s"
case_ csv_repeated_line 3 "repeats line 1" "${g[@]}" samples config.yaml --prep-csv-file repeated.csv --data-path "$out/s"
case_ negative_class_weight 3 "a weight is 0 or more" "${g[@]}" train negative_weight.yaml --samples-size 64 --epochs 1 \
  --output-path "$out/m"
case_ zero_class_weights 3 "are all 0" "${g[@]}" train zero_weights.yaml --samples-size 64 --epochs 1 --output-path "$out/m"
# A byte order mark (a spreadsheet's CSV) is not part of the first path.
if "${g[@]}" samples config.yaml --prep-csv-file bom.csv --samples-size 64 --data-path "$work/bom" > "$work/bom.log" 2>&1; then
  echo "ok   csv_byte_order_mark: samples from a CSV that starts with a byte order mark"
else
  echo "FAIL csv_byte_order_mark: $(tail -1 "$work/bom.log")"; failures=$((failures + 1))
fi
# Two jobs into one output folder at once: the second is refused, naming the first's process;
# once the first is killed (-9: its lock goes with it), a new job runs.
"${g[@]}" train config.yaml --samples-size 64 --epochs 100 --batch-size 4 --threads 1 --output-path "$work/busy" \
  > "$work/busy.log" 2>&1 &
busy=$!
for _ in $(seq 1 3000); do [ -e "$work/busy/model.pt" ] || grep -q "training" "$work/busy.log" && break; sleep 0.02; done
case_ concurrent_train 3 "another GeoDL job (process $busy) is writing" "${g[@]}" train config.yaml --samples-size 64 \
  --epochs 1 --output-path "$work/busy"
kill -9 $busy 2>/dev/null; wait $busy 2>/dev/null
if "${g[@]}" train config.yaml --samples-size 64 --epochs 1 --batch-size 4 --threads 2 --output-path "$work/busy" \
     > "$work/after_busy.log" 2>&1; then
  echo "ok   lock_of_a_killed_job: free again"
else
  echo "FAIL lock_of_a_killed_job: $(tail -1 "$work/after_busy.log")"; failures=$((failures + 1))
fi
# Junk variables of OpenMP, oneDNN and LibTorch: a warning in GeoDL's words, no stack trace
# nor LibTorch's log line, and the job runs.
if OMP_NUM_THREADS=abc MKL_NUM_THREADS=-3 OMP_PROC_BIND=junk ATEN_CPU_CAPABILITY=junk ONEDNN_MAX_CPU_ISA=junk \
     "${cls[@]}" --model "$model" --input scene_val.tif --window 64 \
     --output "$work/threads/c.tif" > "$work/threads.log" 2>&1 &&
   grep -q "OMP_NUM_THREADS is 'abc', not a positive whole number" "$work/threads.log" &&
   grep -q "MKL_NUM_THREADS is '-3'" "$work/threads.log" && ! grep -q "frame #" "$work/threads.log" &&
   grep -q "OMP_PROC_BIND is 'junk', not true, false" "$work/threads.log" &&
   grep -q "ATEN_CPU_CAPABILITY is 'junk', not default, avx2 or avx512" "$work/threads.log" &&
   grep -q "ONEDNN_MAX_CPU_ISA is 'junk', not an instruction set" "$work/threads.log" &&
   ! grep -q "InitGoogleLogging" "$work/threads.log"; then
  echo "ok   junk_thread_variables: warned and ignored"
else
  echo "FAIL junk_thread_variables:"; tail -5 "$work/threads.log" | sed 's/^/    /'; failures=$((failures + 1))
fi
case_ derived_polygons_over_a_users_file 3 "exists and GeoDL did not write it" "${cls[@]}" --model "$model" \
  --input scene_val.tif --working-folder "$in/wf" --polygons --window 64
case_ derived_model_over_a_users_file 3 "exists and GeoDL did not write it" "${g[@]}" train config.yaml --samples-size 64 \
  --epochs 1 --batch-size 4 --output-path "$in/notmine"
# With --overwrite the user's file is replaced; what GeoDL wrote is replaced without it.
cp -r wf "$work/wf"
if "${cls[@]}" --model "$model" --input scene_val.tif --working-folder "$work/wf" --polygons --window 64 --overwrite \
     > "$work/overwrite.log" 2>&1 &&
   "${cls[@]}" --model "$model" --input scene_val.tif --working-folder "$work/wf" --polygons --window 64 \
     > "$work/again.log" 2>&1 && grep -q "replacing the existing polygon file" "$work/again.log"; then
  echo "ok   derived_output_overwrite: replaced with --overwrite, then as GeoDL's own"
else
  echo "FAIL derived_output_overwrite:"; tail -3 "$work/overwrite.log" "$work/again.log" | sed 's/^/    /'; failures=$((failures + 1))
fi
case_ missing_store 3 "create it with \`geodl samples\`" "${g[@]}" train config.yaml --data-path "$out/nowhere"
case_ unknown_model 3 "not one of unet, unetsmall" "${g[@]}" train config.yaml --model resnet --output-path "$out/m"
case_ long_name_sidecar 3 "its sidecar (NAME.aux.xml" "${cls[@]}" --model "$model" --input scene_val.tif --output "$out/$long${long:0:6}.tif"
case_ long_derived_name 3 "choose a shorter name" "${cls[@]}" --model "$model" --input scene_val.tif --output "$out/$long.tif" --probabilities
case_ output_in_a_file 4 "Not a directory" "${cls[@]}" --model "$model" --input scene_val.tif --output "$in/scene.csv/c.tif"
# Paths that are not regular files: refused before anything opens them (a FIFO blocked for
# ever, a device was replaced by a regular file), and a link to nothing not written through.
mkfifo "$work/fifo.tif" "$work/fifo.pt"
mknod "$work/null.tif" c 1 3 2>/dev/null || ln -s /dev/null "$work/null.tif"
ln -s "$work/nowhere.tif" "$work/dangling.tif"
case_ output_is_a_device 3 "FIFO, socket or device" "${cls[@]}" --model "$model" --input scene_val.tif --output "$work/null.tif"
[ -c "$work/null.tif" ] || { echo "FAIL output_is_a_device: the device was replaced"; failures=$((failures + 1)); }
case_ output_is_a_fifo 3 "FIFO, socket or device" "${cls[@]}" --model "$model" --input scene_val.tif --output "$work/fifo.tif"
case_ input_is_a_fifo 4 "FIFO, socket or device" "${cls[@]}" --model "$model" --input "$work/fifo.tif" --output "$out/c.tif"
case_ model_is_a_fifo 3 "FIFO, socket or device" "${cls[@]}" --model "$work/fifo.pt" --input scene_val.tif --output "$out/c.tif"
case_ info_of_a_fifo 3 "FIFO, socket or device" "${g[@]}" info "$work/fifo.pt"
case_ output_is_a_dangling_link 3 "symbolic link" "${cls[@]}" --model "$model" --input scene_val.tif --output "$work/dangling.tif"
[ -L "$work/dangling.tif" ] || { echo "FAIL output_is_a_dangling_link: the link was replaced"; failures=$((failures + 1)); }

# The same classes through the Processing algorithms (qgis_process, the QGIS desktop's code).
if [ -n "$plugin_dir" ]; then
  export HOME=$work/home QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR=$work/home
  mkdir -p "$HOME"
  chmod 700 "$HOME"
  /usr/bin/python3 "$here/../../scripts/register-qgis-plugin.py" "$plugin_dir" \
    "$HOME/.local/share/QGIS/QGIS3/profiles/default/QGIS/QGIS3.ini" > /dev/null
  q=(qgis_process.bin run)
  qgis=1 inputs=""
  case_ qgis_output_is_input 1 "never writes over a file the job reads" "${q[@]}" geodl:classify --INPUT="$in/scene_val.tif" --MODEL="$model" \
    --OUTPUT="$in/scene_val.tif"
  case_ qgis_footprint_is_labels 1 "never writes over a file the job reads" "${q[@]}" geodl:createsamples --INPUT="$in/scene_trn.tif" \
    --VECTOR="$in/scene_trn_labels.gpkg" --FIELD=class --SAMPLE_SIZE=64 --OUTPUT_FOLDER="$out/s" \
    --FOOTPRINT="$in/scene_trn_labels.gpkg"
  case_ qgis_pixels_3x_larger 1 "ACCEPT_MISMATCH" "${q[@]}" geodl:classify --INPUT="$in/coarse.tif" --MODEL="$model" \
    --OUTPUT="$out/c.tif"
  case_ qgis_crs_in_degrees 1 "is in a CRS in degrees" "${q[@]}" geodl:classify --INPUT="$in/degrees.tif" --MODEL="$model" \
    --OUTPUT="$out/c.tif"
  case_ qgis_resample_degrees 1 "pixel sizes in the two do not compare" "${q[@]}" geodl:classify --INPUT="$in/degrees.tif" \
    --MODEL="$model" --RESAMPLE=true --ACCEPT_MISMATCH=true --OUTPUT="$out/c.tif"
  case_ qgis_flipped_weights 1 "is damaged" "${q[@]}" geodl:classify --INPUT="$in/scene_val.tif" --MODEL="$in/flipped.pt" \
    --OUTPUT="$out/c.tif"
  case_ qgis_store_as_model 1 "is a sample store" "${q[@]}" geodl:classify --INPUT="$in/scene_val.tif" \
    --MODEL="$in/store.pt" --OUTPUT="$out/c.tif"
  case_ qgis_window_100000 1 "window" "${q[@]}" geodl:classify --INPUT="$in/scene_val.tif" --MODEL="$model" \
    --WINDOW=100000 --OUTPUT="$out/c.tif"
  case_ qgis_threads_100000 1 "THREADS" "${q[@]}" geodl:classify --INPUT="$in/scene_val.tif" --MODEL="$model" \
    --THREADS=100000 --OUTPUT="$out/c.tif"
  case_ qgis_raster_1x1 1 "smaller than the smallest sample" "${q[@]}" geodl:createsamples --INPUT="$in/tiny.tif" \
    --VECTOR="$in/scene_val_labels.gpkg" --FIELD=class --SAMPLE_SIZE=64 --OUTPUT_FOLDER="$out/s" \
    --FOOTPRINT="$out/s/footprint.gpkg"
  case_ qgis_truncated_store 1 "damaged or truncated" "${q[@]}" geodl:train --TRAINING_STORE="$in/cut.hdf5" \
    --VALIDATION_STORE="$in/samples/val_samples.hdf5" --MODEL=1 --EPOCHS=1 --OUTPUT_MODEL="$out/m/model.pt"
  case_ qgis_damaged_store 1 "is damaged" "${q[@]}" geodl:train --TRAINING_STORE="$in/damaged.hdf5" \
    --VALIDATION_STORE="$in/samples/val_samples.hdf5" --MODEL=1 --EPOCHS=1 --OUTPUT_MODEL="$out/m/model.pt"
  case_ qgis_byte_and_float_stores 1 "Float32" "${q[@]}" geodl:train --TRAINING_STORE="$in/samples/trn_samples.hdf5" \
    --VALIDATION_STORE="$in/float_store/samples/val_samples.hdf5" --MODEL=1 --EPOCHS=1 --OUTPUT_MODEL="$out/m/model.pt"
fi

echo "bad inputs: $cases cases, $failures failed; crashes $crashes, hangs $hangs, leftovers $leftovers," \
     "inputs changed $changed; messages naming a fix: $with_fix of $cases"
[ $failures = 0 ]
