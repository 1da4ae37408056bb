#!/usr/bin/env bash
# Classification in fp32 and in bf16, side by side in one run: a generated 3-band scene of
# SIZE x SIZE pixels (default 3000), unetsmall, window 256, overlap 25%, batch 4, all cores.
# Prints the CPU and its bf16 instructions, Mpx/s, windows/s and the achieved GFLOP/s
# (unetsmall: about 18.4 GFLOP per 256 px window), peak resident memory, how many pixels
# keep their class, and, from a 3x3 convolution in the same run (Debian's python3-torch,
# the same oneDNN), the GFLOP/s this machine reaches in fp32 and bf16 channels-last. The
# model: unetsmall trained for one short epoch on a small scene (speed does not depend on
# the weights), or MODEL.pt.
# Usage: benchmarks/run_precision_benchmark.sh BUILD_DIR [SIZE] [MODEL.pt]
set -euo pipefail
source "$(dirname "$(realpath "$0")")/speed_model.sh"
build=$(realpath "${1:?usage: run_precision_benchmark.sh BUILD_DIR [SIZE] [MODEL.pt]}")
size=${2:-3000}
geodl=$build/engine/geodl
work=${GEODL_BENCH_DIR:-$build/bench-precision}
rm -rf "$work" && mkdir -p "$work"
cd "$work"
threads=$(nproc)
flags=$(grep -m1 '^flags' /proc/cpuinfo | grep -o 'amx_bf16\|avx512_bf16' | sort -u | tr '\n' ' ')
echo "== $threads cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); bf16 instructions: ${flags:-none}"
echo "== unetsmall, window 256, overlap 25%, batch 4, ${size} x ${size} scene"
model=$(speed_model "$geodl" "${3:-}")
"$geodl" make-scene scene --size "$size" --seed 7 > /dev/null
args=(-q classify --input scene/scene_trn.tif --model "$model" --window 256 --overlap 25 --batch-size 4
      --threads "$threads" --probabilities)
run() {  # run PRECISION: seconds, peak KiB, windows
  /usr/bin/time -f "%e %M" -o "$1.time" "$geodl" "${args[@]}" --output "$1/c.tif" --precision "$1" > "$1.log" 2>&1 ||
    { cat "$1.log"; exit 1; }
  read -r seconds kib < "$1.time"
  echo "$seconds $kib $(grep -o '[0-9]* windows)' "$1.log" | grep -o '[0-9]*')"
}
read -r s32 k32 w32 < <(run fp32)
if ! read -r s16 k16 w16 < <(run bf16 2> /dev/null); then
  echo "SKIPPED: bf16 refused on this CPU: $(tail -1 bf16.log)"
  exit 0
fi
agree=$(/usr/bin/python3 -c "
from osgeo import gdal
a, b = gdal.Open('fp32/c.tif').ReadAsArray(), gdal.Open('bf16/c.tif').ReadAsArray()
print('%.3f' % (100 * (a == b).mean()))")
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
awk -v size="$size" -v s32="$s32" -v k32="$k32" -v w32="$w32" -v s16="$s16" -v k16="$k16" -v w16="$w16" \
    -v agree="$agree" -v c32="$c32" -v c16="$c16" 'BEGIN {
  mpx = size * size / 1e6
  printf "\n| precision | seconds | Mpx/s | windows/s | GFLOP/s (18.4 per window) | peak RSS |\n|---|---|---|---|---|---|\n"
  printf "| fp32 | %.1f | %.3f | %.2f | %.0f | %.0f MiB |\n", s32, mpx / s32, w32 / s32, 18.4 * w32 / s32, k32 / 1024
  printf "| bf16 | %.1f | %.3f | %.2f | %.0f | %.0f MiB |\n", s16, mpx / s16, w16 / s16, 18.4 * w16 / s16, k16 / 1024
  printf "\nbf16 / fp32: %.2fx; pixels of the same class: %s%%\n", s32 / s16, agree
  printf "3x3 convolution, 64 channels, channels-last (python3-torch, same oneDNN): fp32 %.0f GFLOP/s, bf16 %.0f GFLOP/s (%.1fx)\n", c32, c16, c16 / c32
  printf "share of that reached: fp32 %.0f%%, bf16 %.0f%%\n", 100 * 18.4 * w32 / s32 / c32, 100 * 18.4 * w16 / s16 / c16 }'
