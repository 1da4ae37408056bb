#!/usr/bin/env bash
# The training benchmark, GeoDL and its PyTorch reference side by side in one run, on the
# Massachusetts buildings data (../shared/data): samples of 256 px at stride 200 as in
# geo-deep-learning's example (22978945_15 training, 23429155_15 validation), unetsmall
# trained for the same epochs with the same batch, augmentation, learning rate and
# threads, in fp32 and (on CPUs with AVX512_BF16 or AMX-BF16) bf16. Prints building IoU,
# mean IoU, samples per second and peak resident memory of each run. GEODL_BENCH_SEED sets
# the seed (default 1); GEODL_BENCH_REFERENCE=0 leaves the reference out, and
# GEODL_BENCH_CHECKPOINTED=0 the last precision's run with gradient checkpointing.
# Usage: benchmarks/run_train_benchmark.sh BUILD_DIR [EPOCHS] [BATCH]
set -euo pipefail
source "$(dirname "$(realpath "$0")")/preamble.sh"
build=$(realpath "${1:?usage: run_train_benchmark.sh BUILD_DIR [EPOCHS] [BATCH]}")
epochs=${2:-30}
batch=${3:-8}
massachusetts_data required
bench_work bench-train
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
echo "== $(nproc) cores, $cpu; $threads threads, unetsmall, batch $batch, $epochs epochs, seed $seed, lr $lr (x$gamma every $step epochs), rotation 45 deg p=0.5, hflip p=0.5"
"$build/engine/geodl" -q samples "$work/config.yaml" | grep -E "samples in|class pixels"
# GeoDL in each precision, then the reference in its best configuration for each: fp32 in
# the default layout (channels last trains slower there on these CPUs), bf16 under autocast
# and channels last. bf16 rows are left out on CPUs without AVX512_BF16 or AMX-BF16.
bf16_ok=1
grep -qm1 'avx512_bf16\|amx_bf16' /proc/cpuinfo || bf16_ok=0
precisions="fp32"
[ "$bf16_ok" = 1 ] && precisions="fp32 bf16" || echo "(no AVX512_BF16 or AMX-BF16 here: fp32 only)"
# GeoDL's runs: each precision, and the last one with gradient checkpointing too (memory).
runs=$precisions
[ "${GEODL_BENCH_CHECKPOINTED:-1}" = 1 ] && runs="$runs ${precisions##* }+checkpoint"
summary_args=()
for run in $runs; do
  p=${run%+checkpoint}
  extra=()
  [ "$run" != "$p" ] && extra=(--checkpoint)
  echo
  echo "== GeoDL, precision $p${extra:+, checkpointing}"
  start=$(date +%s.%N)
  /usr/bin/time -f "%M" -o "$work/geodl-$run.rss" "$build/engine/geodl" -q train "$work/config.yaml" \
    --precision "$p" "${extra[@]}" --output-path "$work/geodl-$run" 2>&1 | grep -E "^epoch|^training|^best"
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  summary_args+=("GeoDL ${run/+/ + }" geodl "$work/geodl-$run/metrics.csv" "$wall" "$(cat "$work/geodl-$run.rss")")
done
if [ "${GEODL_BENCH_REFERENCE:-1}" = 1 ]; then
  for p in $precisions; do
    flags=()
    [ "$p" = bf16 ] && flags=(--bf16 --channels-last)
    echo
    echo "== Reference: PyTorch, $p${flags:+ (${flags[*]})} (Dataset on h5py, DataLoader with 2 workers)"
    start=$(date +%s.%N)
    /usr/bin/time -f "%M" -o "$work/reference-$p.rss" /usr/bin/python3 "$here/reference/pytorch_train.py" \
      "$work/samples/trn_samples.hdf5" "$work/samples/val_samples.hdf5" --epochs "$epochs" --batch "$batch" \
      --threads "$threads" --lr $lr --step-size $step --gamma $gamma --seed $seed --rotate-limit 45 \
      --rotate-prob 0.5 --hflip-prob 0.5 --vflip-prob 0 "${flags[@]}" > "$work/reference-$p.jsonl"
    wall=$(echo "$(date +%s.%N) - $start" | bc)
    /usr/bin/python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l); print("epoch %d: train loss %.4f, val loss %.4f, mean IoU %.4f, building %.3f; %.1f s, %.2f samples/s, data wait %.2f s" % (r["epoch"], r["train_loss"], r["val_loss"], r["mean_iou"], list(r["iou"].values())[1], r["seconds"], r["samples_per_second"], r["data_wait"]))' "$work/reference-$p.jsonl"
    summary_args+=("reference $p" reference "$work/reference-$p.jsonl" "$wall" "$(cat "$work/reference-$p.rss")")
  done
fi
echo
/usr/bin/python3 - "${summary_args[@]}" <<'PY'
import csv, json, sys
def mean(xs): return sum(xs) / len(xs)
runs = []
args = sys.argv[1:]
for i in range(0, len(args), 5):
    name, kind, path, wall, rss_kib = args[i:i + 5]
    if kind == "geodl":
        g = list(csv.DictReader(open(path)))
        col = [k for k in g[0] if k.startswith("iou_")][1]  # the foreground class (buildings)
        epochs = [dict(building=float(e[col]), miou=float(e["val_mean_iou"]),
                       sps=float(e["train_samples_per_second"])) for e in g]
    else:
        r = [json.loads(l) for l in open(path)]
        key = list(r[0]["iou"])[1]
        epochs = [dict(building=e["iou"][key], miou=e["mean_iou"], sps=e["samples_per_second"]) for e in r]
    later = epochs[1:] or epochs  # epoch 1 includes warm-up in both
    runs.append(dict(name=name, last=epochs[-1], best=max(e["building"] for e in epochs),
                     sps=mean([e["sps"] for e in later]), wall=float(wall), rss=float(rss_kib) / 1024))
print("| | " + " | ".join(r["name"] for r in runs) + " |")
print("|---" * (len(runs) + 1) + "|")
rows = [("building IoU, last epoch", lambda r: "%.4f" % r["last"]["building"]),
        ("building IoU, best of the run", lambda r: "%.4f" % r["best"]),
        ("mean IoU, last epoch", lambda r: "%.4f" % r["last"]["miou"]),
        ("training samples/s (epochs 2-)", lambda r: "%.2f" % r["sps"]),
        ("wall time, whole run", lambda r: "%.0f s" % r["wall"]),
        ("peak resident memory", lambda r: "%.0f MiB" % r["rss"])]
for label, f in rows:
    print("| %s | %s |" % (label, " | ".join(f(r) for r in runs)))
print()
by = {r["name"]: r for r in runs}
for p in ("fp32", "bf16"):
    if "GeoDL " + p in by and "reference " + p in by:
        print("%s: GeoDL / reference throughput %.2fx" % (p, by["GeoDL " + p]["sps"] / by["reference " + p]["sps"]))
if "GeoDL bf16" in by:
    g32, g16 = by["GeoDL fp32"], by["GeoDL bf16"]
    print("GeoDL bf16 / fp32: %.2fx samples/s; building IoU %+.4f (last epoch), %+.4f (best)" %
          (g16["sps"] / g32["sps"], g16["last"]["building"] - g32["last"]["building"], g16["best"] - g32["best"]))
PY
