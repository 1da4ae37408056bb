#!/usr/bin/env bash
# The training benchmark, GeoDL and its PyTorch reference side by side in one run, on the
# Massachusetts buildings data (../shared/data): samples of 256 px at stride 200 as in
# geo-deep-learning's example (22978945_15 training, 23429155_15 validation), unetsmall
# trained for the same epochs with the same batch, augmentation, learning rate and
# threads. Prints building IoU, mean IoU, samples per second and where the time went.
# Usage: benchmarks/run_train_benchmark.sh BUILD_DIR [EPOCHS] [BATCH]
set -euo pipefail
here=$(dirname "$(realpath "$0")")
build=$(realpath "${1:?usage: run_train_benchmark.sh BUILD_DIR [EPOCHS] [BATCH]}")
epochs=${2:-30}
batch=${3:-8}
threads=${GEODL_BENCH_THREADS:-$(nproc)}
data=${GEODL_DATA:-$here/../../shared/data/massachusetts}
[ -d "$data" ] || { echo "no Massachusetts data in $data (set GEODL_DATA)"; exit 1; }
data=$(realpath "$data")
work=${GEODL_BENCH_DIR:-$build/bench-train}
rm -rf "$work" && mkdir -p "$work"
lr=0.001 step=10 gamma=0.5 seed=${GEODL_BENCH_SEED:-1}
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
  model_name: unetsmall
sample:
  prep_csv_file: massachusetts.csv
  samples_dist: 200
training:
  output_path: geodl
  batch_size: $batch
  num_epochs: $epochs
  learning_rate: $lr
  step_size: $step
  gamma: $gamma
  seed: $seed
  threads: $threads
  augmentation:
    rotate_limit: 45
    rotate_prob: 0.5
    hflip_prob: 0.5
    vflip_prob: 0
YAML
echo "== $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); $threads threads, unetsmall, batch $batch, $epochs epochs, seed $seed, lr $lr (x$gamma every $step epochs), rotation 45 deg p=0.5, hflip p=0.5"
"$build/engine/geodl" -q samples "$work/config.yaml" | grep -E "samples in|class pixels"
echo
echo "== GeoDL"
start=$(date +%s.%N)
"$build/engine/geodl" -q train "$work/config.yaml" 2>&1 | grep -E "^epoch|^training|^best"
geodl_wall=$(echo "$(date +%s.%N) - $start" | bc)
echo
echo "== Reference: PyTorch (Dataset on h5py, DataLoader with 2 workers)"
start=$(date +%s.%N)
/usr/bin/python3 "$here/reference/pytorch_train.py" "$work/samples/trn_samples.hdf5" \
  "$work/samples/val_samples.hdf5" --epochs "$epochs" --batch "$batch" --threads "$threads" \
  --lr $lr --step-size $step --gamma $gamma --seed $seed --rotate-limit 45 --rotate-prob 0.5 \
  --hflip-prob 0.5 --vflip-prob 0 | tee "$work/reference.jsonl" | \
  /usr/bin/python3 -c 'import json,sys
for l in sys.stdin:
    r = json.loads(l); print("epoch %d: train loss %.4f, val loss %.4f, mean IoU %.4f, building %.3f; %.1f s, %.2f samples/s, data wait %.2f s" % (r["epoch"], r["train_loss"], r["val_loss"], r["mean_iou"], list(r["iou"].values())[1], r["seconds"], r["samples_per_second"], r["data_wait"]))'
ref_wall=$(echo "$(date +%s.%N) - $start" | bc)
echo
/usr/bin/python3 - "$work/geodl/metrics.csv" "$work/reference.jsonl" "$geodl_wall" "$ref_wall" <<'PY'
import csv, json, sys
g = list(csv.DictReader(open(sys.argv[1])))
r = [json.loads(l) for l in open(sys.argv[2])]
def mean(xs): return sum(xs) / len(xs)
# The foreground class (class 1 of the Massachusetts data, named "1" or "building").
iou_columns = [k for k in g[0] if k.startswith("iou_")]
g_col = iou_columns[1]
r_key = list(r[0]["iou"])[1]
# Throughput over epochs 2.. (epoch 1 includes warm-up in both).
gs = g[1:] or g
rs = r[1:] or r
g_samples_s = mean([float(e["train_samples_per_second"]) for e in gs])
r_samples_s = mean([e["samples_per_second"] for e in rs])
def share(rows, keys, total):
    t = sum(total(e) for e in rows)
    return ", ".join("%s %.0f%%" % (k, 100 * sum(float(e[c]) for e in rows) / t) for k, c in keys)
gk = [("data wait", "data_wait_seconds"), ("forward", "forward_seconds"), ("backward", "backward_seconds"), ("optimizer", "optimizer_seconds")]
rk = [("data wait", "data_wait"), ("forward", "forward"), ("backward", "backward"), ("optimizer", "optimizer")]
g_train = lambda e: float(e["seconds"]) - float(e["validation_seconds"])
print("| | GeoDL | PyTorch reference |")
print("|---|---|---|")
print("| building IoU, last epoch | %.4f | %.4f |" % (float(g[-1][g_col]), r[-1]["iou"][r_key]))
print("| building IoU, best of the run | %.4f | %.4f |" % (max(float(e[g_col]) for e in g), max(e["iou"][r_key] for e in r)))
print("| mean IoU, last epoch | %.4f | %.4f |" % (float(g[-1]["val_mean_iou"]), r[-1]["mean_iou"]))
print("| training samples/s (epochs 2-%d) | %.2f | %.2f |" % (len(g), g_samples_s, r_samples_s))
print("| wall time, whole run | %.0f s | %.0f s |" % (float(sys.argv[3]), float(sys.argv[4])))
print("| training time | %s | %s |" % (share(gs, gk, g_train), share(rs, rk, lambda e: e["train_seconds"])))
print()
print("throughput ratio GeoDL / reference: %.2fx" % (g_samples_s / r_samples_s))
PY
