#!/usr/bin/env bash
# Classification at the machine's limit, side by side in one run on a generated 3-band scene
# of SIZE x SIZE pixels (default 3000), unetsmall, all cores:
#   - GeoDL as it was by default (window 256, overlap 25%, batch 4, fp32);
#   - GeoDL's defaults (window and overlap automatic: windows as large as the memory budget
#     allows, up to 512 px, overlapping by 64 px; the default batch), in fp32 and in bf16;
#   - the PyTorch reference (python3-torch, the same LibTorch) in its best configuration:
#     window 256 at 25% as geo-deep-learning, and 1024 px windows overlapping by 64 px,
#     channels last, fp32 and bf16 autocast, batch 4.
# Prints the CPU and its bf16 instructions, Mpx/s, the pixels computed per output pixel, the
# achieved GFLOP/s (unetsmall: about 18.4 GFLOP per 256 px window, in proportion to a
# window's pixels), peak resident memory, the pixels that keep their class, and, from a 3x3
# convolution in the same run (the same oneDNN), the GFLOP/s this machine reaches in fp32
# and bf16 channels-last. The model: unetsmall trained for one short epoch on a small scene
# (speed does not depend on the weights), or MODEL.pt. With QUALITY_MODEL (the training
# benchmark's Massachusetts model) and the Massachusetts data, the validation image is also
# classified in each GeoDL setting and its building IoU measured against the ground truth.
# bf16 rows are left out on CPUs without AVX512_BF16 or AMX-BF16.
# Usage: benchmarks/run_precision_benchmark.sh BUILD_DIR [SIZE] [MODEL.pt] [QUALITY_MODEL.pt]
set -euo pipefail
source "$(dirname "$(realpath "$0")")/preamble.sh"
source "$here/speed_model.sh"
build=$(realpath "${1:?usage: run_precision_benchmark.sh BUILD_DIR [SIZE] [MODEL.pt] [QUALITY_MODEL.pt]}")
size=${2:-3000}
quality_model=${4:-}
[ -z "$quality_model" ] || quality_model=$(realpath "$quality_model")
massachusetts_data
bench_work bench-precision
cd "$work"
threads=$(nproc)
flags=$(grep -m1 '^flags' /proc/cpuinfo | grep -o 'amx_bf16\|avx512_bf16' | sort -u | tr '\n' ' ')
echo "== $threads cores, $cpu; bf16 instructions: ${flags:-none}"
echo "== unetsmall, ${size} x ${size} scene; batch 4 before and in the reference, the default batch at the defaults"
model=$(speed_model "$geodl" "${3:-}")
"$geodl" make-scene scene --size "$size" --seed 7 > /dev/null
precisions="fp32"
[ -n "$flags" ] && precisions="fp32 bf16"
settings=("before fp32 256 25 4")
for p in $precisions; do settings+=("defaults $p 0 -1 -"); done
geodl_run() {  # NAME PRECISION WINDOW OVERLAP BATCH(- default) INPUT MODEL: seconds, peak KiB, windows, window, overlap, ratio
  local name=$1 p=$2 window=$3 overlap=$4 batch=$5 input=$6 m=$7
  local batch_flag=()
  [ "$batch" = - ] || batch_flag=(--batch-size "$batch")
  /usr/bin/time -f "%e %M" -o "$name.time" "$geodl" classify --input "$input" --model "$m" --window "$window" \
    --overlap "$overlap" "${batch_flag[@]}" --threads "$threads" --precision "$p" --output "$name/c.tif" > "$name.log" 2>&1 ||
    { cat "$name.log"; exit 1; }
  read -r seconds kib < "$name.time"
  local summary
  summary=$(grep -o '[0-9]* windows of [0-9]* px overlapping by [0-9]* px: [0-9.]* pixels' "$name.log" | tail -1)
  echo "$seconds $kib $(echo "$summary" | awk '{print $1, $4, $8, $10}')"
}
rows=()
for s in "${settings[@]}"; do
  read -r label p window overlap batch <<< "$s"
  read -r sec kib windows win ov ratio < <(geodl_run "$label-$p" "$p" "$window" "$overlap" "$batch" scene/scene_trn.tif "$model")
  rows+=("GeoDL $label|$p|$win|$ov|$sec|$kib|$windows|$ratio")
done
for p in $precisions; do
  for cfg in "256 25" "1024 6.25"; do
    read -r window overlap <<< "$cfg"
    extra=(--channels-last)
    [ "$p" = bf16 ] && extra+=(--bf16)
    /usr/bin/time -f "%e %M" -o ref.time /usr/bin/python3 "$here/reference/pytorch_classify.py" scene/scene_trn.tif \
      "ref-$p-$window.tif" --bands 3 --classes 5 --window "$window" --overlap "$overlap" --batch 4 \
      --threads "$threads" "${extra[@]}" > "ref-$p-$window.json"
    read -r sec kib < ref.time
    windows=$(/usr/bin/python3 -c "import json; print(json.load(open('ref-$p-$window.json'))['windows'])")
    ov=$(/usr/bin/python3 -c "print(round($window * $overlap / 100))")
    ratio=$(/usr/bin/python3 -c "print('%.2f' % ($windows * $window ** 2 / $size ** 2))")
    rows+=("reference|$p|$window|$ov|$sec|$kib|$windows|$ratio")
  done
done
cat > conv.py <<'PY'
import sys, time, torch
torch.set_num_threads(int(sys.argv[1]))
x = torch.randn(4, 64, 128, 128).contiguous(memory_format=torch.channels_last)
w = torch.randn(64, 64, 3, 3).contiguous(memory_format=torch.channels_last)
flop = 2 * 4 * 64 * 64 * 9 * 128 * 128
for name, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
    xx, ww = x.to(dt), w.to(dt)
    for _ in range(3): torch.nn.functional.conv2d(xx, ww, padding=1)
    t = time.perf_counter()
    for _ in range(10): torch.nn.functional.conv2d(xx, ww, padding=1)
    print(name, flop * 10 / (time.perf_counter() - t) / 1e9)
PY
read -r _ c32 _ c16 < <(/usr/bin/python3 conv.py "$threads" | tr '\n' ' '; echo)
agree=""
if [ -f defaults-bf16/c.tif ]; then
  agree=$(/usr/bin/python3 -c "
from osgeo import gdal
a, b = gdal.Open('defaults-fp32/c.tif').ReadAsArray(), gdal.Open('defaults-bf16/c.tif').ReadAsArray()
c = gdal.Open('before-fp32/c.tif').ReadAsArray()
print('%.3f %.3f' % (100 * (a == b).mean(), 100 * (a == c).mean()))")
fi
printf '%s\n' "${rows[@]}" | awk -F'|' -v size="$size" -v c32="$c32" -v c16="$c16" -v agree="$agree" '
BEGIN { mpx = size * size / 1e6
  printf "\n| run | precision | window | overlap | Mpx/s | computed / output px | GFLOP/s | of the conv roofline | peak RSS |\n"
  printf "|---|---|---|---|---|---|---|---|---|\n" }
{ gflops = 18.4 * ($3 / 256) ^ 2 * $7 / $5; roof = ($2 == "bf16" ? c16 : c32)
  printf "| %s | %s | %d | %d px | %.3f | %.2f | %.0f | %.0f%% | %.0f MiB |\n", $1, $2, $3, $4, mpx / $5, $8, gflops, 100 * gflops / roof, $6 / 1024
  speed[$1 " " $2] = mpx / $5 }
END {
  printf "\n3x3 convolution, 64 channels, channels last (same oneDNN): fp32 %.0f GFLOP/s, bf16 %.0f GFLOP/s (%.1fx)\n", c32, c16, c16 / c32
  base = speed["GeoDL before fp32"]
  if (speed["GeoDL defaults fp32"]) printf "defaults fp32 / before: %.2fx\n", speed["GeoDL defaults fp32"] / base
  if (speed["GeoDL defaults bf16"]) printf "defaults bf16 / before: %.2fx; bf16 / fp32 at the defaults: %.2fx\n", speed["GeoDL defaults bf16"] / base, speed["GeoDL defaults bf16"] / speed["GeoDL defaults fp32"]
  if (agree != "") { split(agree, a, " "); printf "pixels of the same class: bf16 against fp32 %s%%, defaults against before %s%%\n", a[1], a[2] } }'
if [ -n "$quality_model" ] && [ -d "$data" ]; then
  echo
  echo "Massachusetts validation image, the building IoU of each GeoDL setting ($quality_model):"
  for s in "${settings[@]}"; do
    read -r label p window overlap batch <<< "$s"
    geodl_run "mass-$label-$p" "$p" "$window" "$overlap" "$batch" "$data/23429155_15.tif" "$quality_model" > /dev/null
    iou=$("$geodl" -q evaluate "mass-$label-$p/c.tif" "$data/massachusetts_buildings.gpkg" --field class |
          awk '$1 == "1" || $1 == "building" {print $2}')
    echo "  $label $p: building IoU $iou"
  done
fi
