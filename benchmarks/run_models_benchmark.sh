#!/usr/bin/env bash
# The models and losses on Massachusetts buildings (../shared/data), side by side in one
# run: the samples of the training benchmark (256 px at stride 200, 22978945_15 training,
# 23429155_15 validation), each model trained from random initialization for the same
# epochs, batch, learning rate, augmentation and threads. Prints building IoU (last epoch
# and best), mean IoU, training samples per second and peak resident memory per run.
# GEODL_BENCH_RUNS lists MODEL:LOSS runs (default: unetsmall, the three ResNet UNets, UNet++
# and the two DeepLabs with cross-entropy, and unetsmall with dice and ce_dice);
# GEODL_BENCH_SEED sets the seed.
# Usage: benchmarks/run_models_benchmark.sh BUILD_DIR [EPOCHS] [BATCH]
set -euo pipefail
source "$(dirname "$(realpath "$0")")/preamble.sh"
build=$(realpath "${1:?usage: run_models_benchmark.sh BUILD_DIR [EPOCHS] [BATCH]}")
epochs=${2:-30}
batch=${3:-8}
massachusetts_data required
bench_work bench-models
runs=${GEODL_BENCH_RUNS:-"unetsmall:cross_entropy resnet18_unet:cross_entropy resnet34_unet:cross_entropy resnet50_unet:cross_entropy resnet34_unetplusplus:cross_entropy deeplabv3_resnet50:cross_entropy deeplabv3plus_resnet50:cross_entropy unetsmall:dice unetsmall:ce_dice"}
seed=${GEODL_BENCH_SEED:-1}
cat > "$work/massachusetts.csv" <<CSV
$data/22978945_15.tif,$data/massachusetts_buildings.gpkg,class,trn
$data/23429155_15.tif,$data/massachusetts_buildings.gpkg,class,val
CSV
cat > "$work/config.yaml" <<YAML
global:
  samples_size: 256
  num_classes: 2
  data_path: .
  number_of_bands: 3
model:
  wavelengths: [0.665, 0.56, 0.49]  # red, green, blue (DOFA needs them; the others record them)
sample:
  prep_csv_file: massachusetts.csv
  samples_dist: 200
training:
  batch_size: $batch
  num_epochs: $epochs
  learning_rate: 0.001
  step_size: 10
  gamma: 0.5
  seed: $seed
  threads: $threads
  augmentation:
    rotate_limit: 45
    rotate_prob: 0.5
    hflip_prob: 0.5
    vflip_prob: 0
YAML
echo "== $(nproc) cores, $cpu; $threads threads, batch $batch, $epochs epochs, seed $seed, Adam lr 0.001 (x0.5 every 10 epochs), fp32, random initialization"
"$build/engine/geodl" -q samples "$work/config.yaml" | grep -E "samples in"
rows=()
for run in $runs; do
  model=${run%%:*} loss=${run#*:}
  out="$work/$model-$loss"
  echo
  echo "== $model, loss $loss"
  /usr/bin/time -f "%M" -o "$out.rss" "$build/engine/geodl" -q train "$work/config.yaml" --model "$model" --loss "$loss" \
    --output-path "$out" 2>&1 | grep -E "^training|^best" || true
  rows+=("$model" "$loss" "$out/metrics.csv" "$(cat "$out.rss")")
done
echo
/usr/bin/python3 - "${rows[@]}" <<'PY'
import csv, sys
args = sys.argv[1:]
print("| model | loss | building IoU, last epoch | building IoU, best | mean IoU, last epoch | samples/s (epochs 2-) | peak RSS |")
print("|---|---|---|---|---|---|---|")
for i in range(0, len(args), 4):
    model, loss, path, kib = args[i:i + 4]
    e = list(csv.DictReader(open(path)))
    col = [k for k in e[0] if k.startswith("iou_")][1]
    later = e[1:] or e
    sps = sum(float(r["train_samples_per_second"]) for r in later) / len(later)
    print("| %s | %s | %.4f | %.4f | %.4f | %.2f | %.0f MiB |" % (model, loss, float(e[-1][col]),
          max(float(r[col]) for r in e), float(e[-1]["val_mean_iou"]), sps, float(kib) / 1024))
PY
