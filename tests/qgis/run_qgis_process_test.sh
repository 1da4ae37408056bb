#!/usr/bin/env bash
# qgis_process sees and runs GeoDL: a throw-away HOME whose default QGIS profile gets the
# same registration scripts/demo.sh does (the C++ plugin path, and the Python plugin
# geodl_processing that qgis_process loads), then `qgis_process.bin list` must show the
# geodl algorithms and `qgis_process.bin run geodl:classify` must write a class raster
# with the model's colour table, and a .vrt class raster written in parts beside it.
# Then every other algorithm runs too (its help first): the batch size probe, samples from the
# scene's training raster and labels, one epoch of training a SegFormer B0 on them, and a
# classification with it.
# Then QGIS in French (the profile's interface language): algorithm names, group, parameter
# labels and help come out in French.
# Usage: run_qgis_process_test.sh PLUGIN_DIR RASTER MODEL
set -euo pipefail
plugin_dir=$(realpath "$1")
raster=$(realpath "$2")
model=$(realpath "$3")
here=$(dirname "$(realpath "$0")")
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
export HOME=$home QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR=$home
ini=$home/.local/share/QGIS/QGIS3/profiles/default/QGIS/QGIS3.ini
/usr/bin/python3 "$here/../../scripts/register-qgis-plugin.py" "$plugin_dir" "$ini"
qgis_process.bin list > "$home/list.txt" 2>&1 || { cat "$home/list.txt"; exit 1; }
for alg in createsamples train classify estimatebatchsize; do
  grep -q "geodl:$alg" "$home/list.txt" || { echo "qgis_process list lacks geodl:$alg:"; cat "$home/list.txt"; exit 1; }
done
echo "qgis_process list: $(grep -c 'geodl:' "$home/list.txt") geodl algorithms"
qgis_process.bin run geodl:classify --INPUT="$raster" --MODEL="$model" --WINDOW=64 --THREADS=2 \
  --OUTPUT="$home/classes.tif" > "$home/run.txt" 2>&1 || { cat "$home/run.txt"; exit 1; }
/usr/bin/python3 - "$home/classes.tif" <<'PY'
import sys
from osgeo import gdal
d = gdal.Open(sys.argv[1])
band = d.GetRasterBand(1)
assert band.GetColorTable() is not None, 'no colour table'
names = band.GetCategoryNames()
assert names and 'building' in names, names
print('qgis_process run geodl:classify: %d x %d class raster, classes %s' % (d.RasterXSize, d.RasterYSize, names))
PY
# A .vrt output from QGIS: written in parts beside it (docs/parts.md), the same classes.
qgis_process.bin run geodl:classify --INPUT="$raster" --MODEL="$model" --WINDOW=64 --THREADS=2 \
  --OUTPUT="$home/classes.vrt" --PROBABILITIES="$home/probabilities.vrt" > "$home/run_vrt.txt" 2>&1 ||
  { cat "$home/run_vrt.txt"; exit 1; }
/usr/bin/python3 - "$home/classes.tif" "$home/classes.vrt" "$home/probabilities.vrt" <<'PY'
import os, sys
from osgeo import gdal
tif, vrt, probabilities = (gdal.Open(p) for p in sys.argv[1:])
assert vrt.GetDriver().ShortName == 'VRT'
assert (tif.ReadAsArray() == vrt.ReadAsArray()).all(), 'the .vrt classes differ from the .tif'
band = vrt.GetRasterBand(1)
names = band.GetCategoryNames()
assert names and 'building' in names and band.GetColorTable() is not None, names
assert probabilities.RasterCount == len(names), (probabilities.RasterCount, names)
parts = sorted(os.listdir(sys.argv[2][:-4] + '_parts'))
import re
assert parts and all(re.fullmatch(r'block-[0-9]{6}\.tif(\.aux\.xml)?', p) for p in parts), parts
print('qgis_process run geodl:classify to a .vrt: the same classes, written in parts (%d files)' % len(parts))
PY
# A .tif of probabilities beside a .vrt of classes is refused, naming the fix, and nothing is written.
if qgis_process.bin run geodl:classify --INPUT="$raster" --MODEL="$model" --WINDOW=64 --THREADS=2 \
  --OUTPUT="$home/mixed/classes.vrt" --PROBABILITIES="$home/mixed/probabilities.tif" > "$home/mixed.txt" 2>&1 ||
  ! grep -q "give it a .vrt name too" "$home/mixed.txt" || [ -n "$(ls -A "$home/mixed" 2>/dev/null)" ]; then
  echo "a .vrt class raster with .tif probabilities was not refused as it should be:"; cat "$home/mixed.txt"; exit 1
fi
echo "qgis_process run geodl:classify: .tif probabilities beside a .vrt refused"

for alg in createsamples train classify estimatebatchsize; do
  qgis_process.bin help "geodl:$alg" > "$home/help_$alg.txt" 2>&1 || { cat "$home/help_$alg.txt"; exit 1; }
  grep -q "^----------------\|Arguments" "$home/help_$alg.txt" || { echo "qgis_process help geodl:$alg:"; head "$home/help_$alg.txt"; exit 1; }
done
echo "qgis_process help: all four geodl algorithms"
scene=$(dirname "$raster")
qgis_process.bin --json run geodl:estimatebatchsize --MODEL=1 --SAMPLE_SIZE=32 --BANDS=3 --CLASSES=4 \
  --BUDGET_MIB=96 --THREADS=2 > "$home/probe.json" 2> "$home/probe.err" || { cat "$home/probe.err"; exit 1; }
qgis_process.bin --json run geodl:createsamples --INPUT="$scene/scene_trn.tif" --VECTOR="$scene/scene_trn_labels.gpkg" \
  --FIELD=class --SPLIT=1 --VALIDATION_PERCENT=25 --SAMPLE_SIZE=32 --STRIDE=32 --OUTPUT_FOLDER="$home/samples" \
  --FOOTPRINT="$home/footprints.gpkg" > "$home/samples.json" 2> "$home/samples.err" || { cat "$home/samples.err"; exit 1; }
# The model trained is a transformer, SegFormer B0 (its index among the MODEL options, from
# the algorithm's own definition), and classifies the training raster.
qgis_process.bin --json help geodl:train > "$home/help_train.json" 2> "$home/help_train.err" ||
  { cat "$home/help_train.err"; exit 1; }
segformer=$(/usr/bin/python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["parameters"]["MODEL"]["raw_definition"]["options"].index("segformer_b0"))' \
  "$home/help_train.json")
qgis_process.bin --json run geodl:train --TRAINING_STORE="$home/samples/trn_samples.hdf5" \
  --VALIDATION_STORE="$home/samples/val_samples.hdf5" --MODEL="$segformer" --EPOCHS=1 --BATCH_SIZE=4 --THREADS=2 \
  --OUTPUT_MODEL="$home/trained/model.pt" > "$home/train.json" 2> "$home/train.err" || { cat "$home/train.err"; exit 1; }
qgis_process.bin --json run geodl:classify --INPUT="$scene/scene_trn.tif" --MODEL="$home/trained/model.pt" \
  --WINDOW=64 --THREADS=2 --OUTPUT="$home/trained/classes.tif" > "$home/classify.json" 2> "$home/classify.err" ||
  { cat "$home/classify.err"; exit 1; }
/usr/bin/python3 - "$home" "$scene/scene_trn.tif" <<'PY'
import json, os, sys
from osgeo import gdal
home = sys.argv[1]
def results(name):
    return json.load(open(os.path.join(home, name + '.json')))['results']
probe, samples, train, classify = results('probe'), results('samples'), results('train'), results('classify')
assert probe['MAX_BATCH'] >= 1, probe
assert samples['TRAINING_SAMPLES'] > 0 and samples['VALIDATION_SAMPLES'] > 0, samples
assert os.path.exists(samples['TRAINING_STORE']) and os.path.exists(os.path.join(home, 'footprints.gpkg')), samples
assert os.path.exists(train['OUTPUT_MODEL']) and train['BEST_EPOCH'] == 1, train
with open(train['OUTPUT_MODEL'], 'rb') as f:
    assert b'segformer_b0' in f.read(), 'the model file does not name segformer_b0'
classes, raster = gdal.Open(classify['OUTPUT']), gdal.Open(sys.argv[2])
assert (classes.RasterXSize, classes.RasterYSize) == (raster.RasterXSize, raster.RasterYSize), classify
assert classes.GetGeoTransform() == raster.GetGeoTransform(), classify
print('qgis_process run: geodl:estimatebatchsize MAX_BATCH=%d, geodl:createsamples %d+%d samples, '
      'geodl:train a segformer_b0 (best epoch %d), geodl:classify with it (%d x %d)'
      % (probe['MAX_BATCH'], samples['TRAINING_SAMPLES'], samples['VALIDATION_SAMPLES'], train['BEST_EPOCH'],
         classes.RasterXSize, classes.RasterYSize))
PY

# QGIS in French.
printf '\n[locale]\noverrideFlag=true\nuserLocale=fr\n' >> "$ini"
qgis_process.bin --json help geodl:train > "$home/help_fr.json" 2> "$home/help_fr.err" || { cat "$home/help_fr.err"; exit 1; }
qgis_process.bin list > "$home/list_fr.txt" 2>&1
/usr/bin/python3 - "$home/help_fr.json" "$home/list_fr.txt" <<'PY'
import json, sys
help = json.load(open(sys.argv[1]))
listing = open(sys.argv[2]).read()
alg = help['algorithm_details']
checks = {
    'name': (alg['name'], 'Entraîner un modèle de segmentation'),
    'group': (alg['group'], 'Entraînement'),
    'parameter label': (help['parameters']['EPOCHS']['description'], 'Époques'),
    'classify in the list': ('Classer un raster' if 'Classer un raster' in listing else listing[:200], 'Classer un raster'),
}
bad = ['%s: %r, expected %r' % (k, got, want) for k, (got, want) in checks.items() if got != want]

if bad:
    sys.exit('QGIS in French:\n' + '\n'.join(bad))
print('QGIS in French: %s / %s / %s' % (alg['name'], alg['group'], help['parameters']['EPOCHS']['description']))
PY
qgis_process.bin help geodl:classify > "$home/help_fr.txt" 2>&1
grep -q "Classe chaque pixel d'une couche raster" "$home/help_fr.txt" || { echo "the classify help is not in French:"; head -20 "$home/help_fr.txt"; exit 1; }
echo "QGIS in French: the classify help is French"
