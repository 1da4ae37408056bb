#!/usr/bin/env bash
# No output may replace a file the job reads, however its path is spelt, nor a file of
# another kind: each attempt exits with code 3 and a message naming the file, the files stay
# byte-identical, and nothing new is left in the folder.
# Usage: outputs_spare_inputs.sh GEODL SCENE_FOLDER MODEL WORKDIR
set -euo pipefail
geodl=$1 scene=$2 model=$3 work=$4
rm -rf "$work" && mkdir -p "$work/sub"
cp "$scene/scene_val.tif" "$work/a.tif"
cp "$scene/scene_val_labels.gpkg" "$work/labels.gpkg"
cp "$model" "$work/model.pt"
ln -s a.tif "$work/link.tif"
cd "$work"
printf 'a.tif,labels.gpkg,class,trn\n' > prep.csv
printf 'global:\n  data_path: .\n  samples_size: 64\nsample:\n  prep_csv_file: prep.csv\n' > c.yaml
before=$(ls -a | sort | sha256sum; sha256sum a.tif labels.gpkg model.pt)
tried=0
refused() {  # the command must exit 3 naming the file it would have replaced
  tried=$((tried + 1))
  set +e
  out=$("$@" 2>&1)
  code=$?
  set -e
  if [ $code != 3 ] || ! echo "$out" | grep -q "GeoDL never writes over a file the job reads"; then
    echo "not refused (exit $code): $*"; echo "$out"; exit 1
  fi
}
refused "$geodl" -q classify --input a.tif --model model.pt --output a.tif
refused "$geodl" -q classify --input a.tif --model model.pt --output ./sub/../a.tif
refused "$geodl" -q classify --input a.tif --model model.pt --output link.tif
refused "$geodl" -q classify --input a.tif --model model.pt --output model.pt
refused "$geodl" -q classify --input link.tif --model model.pt --output sub/../a.tif
refused "$geodl" -q samples c.yaml --footprint labels.gpkg
refused "$geodl" -q samples c.yaml --footprint ./sub/../labels.gpkg
# A file of another kind where an output goes is not replaced either.
cp labels.gpkg other.gpkg
cp a.tif other.tif
before=$(ls -a | sort | sha256sum; sha256sum a.tif labels.gpkg model.pt other.gpkg other.tif)
kind_refused() {
  tried=$((tried + 1))
  set +e; out=$("$@" 2>&1); code=$?; set -e
  if [ $code != 3 ] || ! echo "$out" | grep -q "GeoDL does not replace it"; then
    echo "not refused (exit $code): $*"; echo "$out"; exit 1
  fi
}
kind_refused "$geodl" -q classify --input a.tif --model model.pt --output other.gpkg
kind_refused "$geodl" -q samples c.yaml --footprint other.tif
after=$(ls -a | sort | sha256sum; sha256sum a.tif labels.gpkg model.pt other.gpkg other.tif)
[ "$before" = "$after" ] || { echo "a file of another kind was touched"; ls -la; exit 1; }
# The derived probability name equal to the input: a_inference.tif's is a_inference_probabilities.tif.
cp a.tif a_inference_probabilities.tif
before=$(ls -a | sort | sha256sum; sha256sum a.tif labels.gpkg model.pt a_inference_probabilities.tif)
refused "$geodl" -q classify --input a_inference_probabilities.tif --model model.pt --output a_inference.tif --probabilities
after=$(ls -a | sort | sha256sum; sha256sum a.tif labels.gpkg model.pt a_inference_probabilities.tif)
[ "$before" = "$after" ] || { echo "the folder or an input changed"; ls -la; exit 1; }
echo "$tried attempts to write over an input or a file of another kind refused; files byte-identical, nothing left"
