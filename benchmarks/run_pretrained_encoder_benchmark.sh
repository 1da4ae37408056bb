#!/usr/bin/env bash
# The pretrained-encoder path end to end on the built-in synthetic scene: a resnet18_unet
# trained from random initialization, from a pretrained-encoder file (torchvision's
# randomly initialised ResNet-18, written by tests/reference/write_torchvision_encoder.py:
# no weights are at hand here, so this proves the loading path, not the gain), and from the
# same file with the encoder frozen for the first epochs and a tenth of the learning rate
# after. Same samples, epochs, batch, seed and threads; prints what the log says of the
# encoder, mean IoU (last and best), samples/s and peak resident memory per run.
# Usage: benchmarks/run_pretrained_encoder_benchmark.sh BUILD_DIR [EPOCHS] [BATCH] [SCENE_SIZE]
set -euo pipefail
source "$(dirname "$(realpath "$0")")/preamble.sh"
build=$(realpath "${1:?usage: run_pretrained_encoder_benchmark.sh BUILD_DIR [EPOCHS] [BATCH] [SCENE_SIZE]}")
epochs=${2:-10}
batch=${3:-8}
size=${4:-1024}
freeze=$(( epochs / 5 > 0 ? epochs / 5 : 1 ))
bench_work bench-pretrained
echo "== $(nproc) cores, $cpu; $threads threads, resnet18_unet, batch $batch, $epochs epochs, seed 1, synthetic scene ${size}x${size}, 64 px samples"
"$geodl" make-scene "$work/scene" --size "$size" --seed 3 > /dev/null
"$geodl" -q samples "$work/scene/config.yaml" --samples-size 64 | grep -E "samples in"
/usr/bin/python3 "$here/../tests/reference/write_torchvision_encoder.py" resnet18 "$work/resnet18.pt"
rows=()
run() {  # NAME FLAGS...
  local name=$1 out="$work/$1"
  shift
  echo
  echo "== $name"
  /usr/bin/time -f "%M" -o "$out.rss" "$geodl" train "$work/scene/config.yaml" --samples-size 64 --model resnet18_unet \
    --epochs "$epochs" --batch-size "$batch" --threads "$threads" --seed 1 --output-path "$out" "$@" 2>&1 |
    grep -E "pretrained encoder|^training|^best" || true
  grep -q "\"pretrained_encoder\":\"${encoder_expected:-}\"" <("$geodl" info --json "$out/model.pt" | tr -d ' \n') ||
    { echo "the model file does not record the encoder '${encoder_expected:-}'"; exit 1; }
  rows+=("$name" "$out/metrics.csv" "$(cat "$out.rss")")
}
encoder_expected="" run random
encoder_expected="$work/resnet18.pt" run pretrained --pretrained-encoder "$work/resnet18.pt"
encoder_expected="$work/resnet18.pt" run "pretrained, frozen $freeze epochs, encoder lr x0.1" \
  --pretrained-encoder "$work/resnet18.pt" --encoder-freeze-epochs "$freeze" --encoder-lr-factor 0.1
echo
/usr/bin/python3 - "${rows[@]}" <<'PY'
import csv, sys
args = sys.argv[1:]
print("| run | mean IoU, last epoch | mean IoU, best | samples/s (epochs 2-) | peak RSS |")
print("|---|---|---|---|---|")
for i in range(0, len(args), 3):
    name, path, kib = args[i:i + 3]
    e = list(csv.DictReader(open(path)))
    later = e[1:] or e
    sps = sum(float(r["train_samples_per_second"]) for r in later) / len(later)
    print("| %s | %.4f | %.4f | %.2f | %.0f MiB |" % (name, float(e[-1]["val_mean_iou"]),
          max(float(r["val_mean_iou"]) for r in e), sps, float(kib) / 1024))
PY
