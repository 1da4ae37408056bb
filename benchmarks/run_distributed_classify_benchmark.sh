#!/usr/bin/env bash
# Classification shared by ranks, side by side in one run: a generated 3-band scene of
# SIZE x SIZE pixels (default 6000) classified by 1 process x 2 threads and by 2 ranks x 1
# thread (started with torchrun's variables, each under GNU time): megapixels per second
# (start to the last rank's end), peak resident memory of each rank, rank 0's assembly
# time, and how far the outputs are from each other. The thread count changes oneDNN's
# summation order, so 2 threads and 1 thread differ in the last bits; identity is checked
# where the threads are equal: 1 process x 1 thread against 2 ranks x 1 thread on a
# 2000 x 2000 crop (cmp). The model: unetsmall trained for one short epoch on a small scene
# (the speed does not depend on the weights), or MODEL.pt.
# Usage: benchmarks/run_distributed_classify_benchmark.sh BUILD_DIR [SIZE] [MODEL.pt]
set -euo pipefail
source "$(dirname "$(realpath "$0")")/preamble.sh"
source "$(dirname "$(realpath "$0")")/speed_model.sh"
build=$(realpath "${1:?usage: run_distributed_classify_benchmark.sh BUILD_DIR [SIZE] [MODEL.pt]}")
size=${2:-6000}
bench_work bench-distributed-classify
cd "$work"
window=256 overlap=25 batch=4
echo "== $(nproc) cores, $cpu; unetsmall, window $window, overlap $overlap%, batch $batch; ${size} x ${size} scene"
model=$(speed_model "$geodl" "${3:-}")
"$geodl" make-scene scene --size "$size" --seed 7 > /dev/null
input=$work/scene/scene_trn.tif
args=(-q classify --input "$input" --model "$model" --window $window --overlap $overlap --batch-size $batch --probabilities)
start=$(date +%s.%N)
/usr/bin/time -f "%e %M" -o one.time "$geodl" "${args[@]}" --output one/c.tif --threads 2 > one.log 2>&1
one_s=$(echo "$(date +%s.%N) - $start" | bc)
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start=$(date +%s.%N)
for rank in 0 1; do
  RANK=$rank WORLD_SIZE=2 LOCAL_RANK=$rank LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    /usr/bin/time -f "%e %M" -o "two-$rank.time" "$geodl" "${args[@]}" --output two/c.tif --threads 1 > "two-$rank.log" 2>&1 &
  pids[$rank]=$!
done
for rank in 0 1; do wait "${pids[$rank]}" || { cat "two-$rank.log"; exit 1; }; done
two_s=$(echo "$(date +%s.%N) - $start" | bc)
assembly=$(grep -o 'assembled the bands of 2 ranks in [0-9.]* s' two-0.log | grep -o '[0-9.]* s')
differences=$(/usr/bin/python3 -c "
from osgeo import gdal
import numpy as np
a, b = gdal.Open('one/c.tif').ReadAsArray(), gdal.Open('two/c.tif').ReadAsArray()
pa = gdal.Open('one/c_probabilities.tif').ReadAsArray().astype(int)
pb = gdal.Open('two/c_probabilities.tif').ReadAsArray().astype(int)
print('%d class pixels of %d, %d probability values by at most %d of 255' % ((a != b).sum(), a.size, (pa != pb).sum(), abs(pa - pb).max()))")
# Identity where the threads are equal.
gdal_translate -q -srcwin 0 0 2000 2000 "$input" crop.tif
crop=("${args[@]/$input/$work/crop.tif}")
"$geodl" "${crop[@]}" --output crop-one/c.tif --threads 1 > crop-one.log 2>&1
"$geodl" "${crop[@]}" --output crop-two/c.tif --threads 1 --nproc 2 > crop-two.log 2>&1
same=yes
cmp -s crop-one/c.tif crop-two/c.tif || same="NO (class raster)"
cmp -s crop-one/c_probabilities.tif crop-two/c_probabilities.tif || same="$same; NO (probabilities)"
read -r _ one_k < one.time
read -r _ k0 < two-0.time
read -r _ k1 < two-1.time
awk -v mpx="$(echo "$size * $size / 1000000" | bc -l)" -v one="$one_s" -v two="$two_s" -v ok="$one_k" \
    -v k0="$k0" -v k1="$k1" -v assembly="$assembly" -v same="$same" -v differences="$differences" 'BEGIN {
  printf "| setup | seconds | Mpx/s | peak RSS per rank (MiB) |\n|---|---|---|---|\n"
  printf "| 1 process x 2 threads | %.1f | %.3f | %.0f |\n", one, mpx / one, ok / 1024
  printf "| 2 ranks x 1 thread | %.1f | %.3f | %.0f (rank 0), %.0f (rank 1) |\n", two, mpx / two, k0 / 1024, k1 / 1024
  printf "\nrank 0 assembly (joining the 2 bands into the class and probability rasters): %s\n", assembly
  printf "2 ranks against 1 process on the same cores: %.0f%%\n", 100 * one / two
  printf "2 threads against 1 thread per rank: %s differ (summation order)\n", differences
  printf "2000 x 2000 crop, 1 process x 1 thread against 2 ranks x 1 thread: class raster and probabilities identical: %s\n", same }'
