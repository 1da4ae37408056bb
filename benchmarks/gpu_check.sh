#!/usr/bin/env bash
# The prepared GPU check (issue 26), for a lent GPU machine with PyTorch's wheel and nothing
# else of GeoDL's (no GDAL, no network). Runs the whole engine that benchmarks/gpu_bundle.sh
# built here and put in BUNDLE (default .gpu in the repository; carry it:
# run(command="benchmarks/gpu_check.sh", carry=[".gpu"])), against the machine's own torch
# libraries, which must be the bundle's version. Writes one file of figures, FIGURES
# (default $OUT/gpu_check.txt or ./gpu_check.txt), with the GPU, the driver and both torches:
#   1. geodl --version, and the core tests labelled gpu;
#   2. the seed's question: the largest batch of unetsmall and unet at 256 x 256 on the whole
#      GPU (90% of its free memory), plain and checkpointed, each confirmed by a real step;
#   3. training steps per second of unetsmall, unet and resnet34_unet, fp32 and bf16, batch
#      64, GeoDL (bench_memory) against PyTorch (reference/pytorch_gpu_train_step.py, its
#      best of plain and channels-last) on the same GPU, with the GPU's utilisation sampled;
#      segformer_b2 and dofa_base's steps in bf16;
#   4. NCCL with one rank against Gloo (the data-parallel check on the GPU, both);
#   5. samples -> train -> classify -> evaluate on the Massachusetts data on the GPU;
#   6. classification Mpx/s of a generated 8000 x 8000 scene in fp32 and bf16, with the peak
#      GPU memory, and the same bytes from two runs.
# Each stage has its own time limit and the whole ends within about 9 minutes; a stage that
# fails or runs out of time is named in the file and the next one still runs. Without a
# bundle (or with another torch) only the compute core is built, as before.
# Usage: benchmarks/gpu_check.sh [FIGURES]
set -uo pipefail
repo=$(cd "$(dirname "$(realpath "$0")")/.." && pwd)
figures=${1:-${OUT:-.}/gpu_check.txt}
bundle=${GEODL_GPU_BUNDLE:-$repo/.gpu}
work=${GEODL_GPU_WORK:-/tmp/geodl-gpu}
python=${PYTHON:-python3}
start=$(date +%s)
mkdir -p "$work"
: > "$figures"
say() { echo "$*" | tee -a "$figures"; }
stage() {  # LIMIT NAME COMMAND...: runs with a time limit, output to the figures
  local limit=$1 name=$2
  shift 2
  say ""
  say "== $name ($(( $(date +%s) - start )) s in)"
  timeout "$limit" "$@" 2>&1 | tee -a "$figures"
  local code=${PIPESTATUS[0]}
  [ "$code" = 0 ] || say "!! $name: exit status $code$([ "$code" = 124 ] && echo ' (out of time)')"
  return "$code"
}

say "GeoDL GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | sed 's/^/GPU: /' | tee -a "$figures"
say "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
torch_info=$("$python" -c "import os, torch; print(torch.__version__.split('+')[0], torch.version.cuda, torch.cuda.is_available(), os.path.dirname(torch.__file__))" 2>&1)
say "PyTorch (version, CUDA, GPU seen, folder): $torch_info"
read -r torch_version _ seen torch_dir <<< "$torch_info"
if [ "$seen" != True ]; then
  say "!! no CUDA GPU is seen by PyTorch: nothing to check"
  exit 1
fi

if [ ! -f "$bundle/TORCH_VERSION" ] || [ "$(cat "$bundle/TORCH_VERSION")" != "$torch_version" ]; then
  say "!! no bundle for torch $torch_version in $bundle (run GEODL_GPU_TORCH=$torch_version benchmarks/gpu_bundle.sh" \
      "on the build machine and carry .gpu): the compute core alone is built and checked"
  source "$repo/benchmarks/gpu_check_core.sh"
  say ""
  say "== done in $(( $(date +%s) - start )) s; figures in $figures"
  exit 0
fi

# The bundle: its libraries unpacked, the machine's torch and NVIDIA libraries found first
# for LibTorch, the bundle's for GDAL and the rest.
mkdir -p "$work/bundle"
tar -C "$work/bundle" -xJf "$bundle/lib.tar.xz"
nvidia_libs=$(ls -d "$torch_dir"/../nvidia/*/lib 2>/dev/null | tr '\n' ':')
export LD_LIBRARY_PATH="$torch_dir/lib:${nvidia_libs}$work/bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bin=$bundle/bin
geodl=$bin/geodl
say "bundle: commit $(cat "$bundle/COMMIT"), torch $(cat "$bundle/TORCH_VERSION")"

# 1. What the engine sees, and the GPU tests.
stage 30 "geodl --version" "$geodl" --version
stage 90 "core tests labelled gpu" "$bin/geodl_core_gpu_tests"

# 2. The seed's question: the largest batch on the whole GPU, confirmed by a step.
whole=$("$python" -c "import torch; f, t = torch.cuda.mem_get_info(); print(int(f * 0.9 / 2**20))")
stage 150 "largest batch at 256 x 256 on the whole GPU ($whole MiB), fp32, confirmed" \
  "$bin/bench_memory" --device cuda --models unetsmall unet --sample-size 256 --budget-mib "$whole" --batch 16 --repeats 2

# 3. Training throughput, GeoDL against PyTorch, the GPU's utilisation sampled meanwhile.
sample_gpu() {  # FILE: utilisation % and memory MiB every 200 ms until killed
  nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits -lms 200 > "$1" 2>/dev/null
}
utilisation() {  # FILE: the mean utilisation of its samples, and the peak memory used
  awk -F', *' '{n++; u += $1; if ($2 > m) m = $2} END {if (n) printf "GPU utilisation %.0f%% (mean of %d samples), peak memory %d MiB\n", u / n, n, m}' "$1"
}
for p in fp32 bf16; do
  sample_gpu "$work/util_$p.csv" & sampler=$!
  stage 100 "GeoDL training steps at 256 x 256, batch 64, $p (cuDNN autotuned, channels last)" \
    "$bin/bench_memory" --device cuda --models unetsmall unet resnet34_unet --sample-size 256 --budget-mib 32768 \
    --batch 64 --repeats 20 --no-confirm --precision "$p"
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  say "$(utilisation "$work/util_$p.csv")"
done
# The transformers (issue 27): SegFormer and DOFA's training steps in bf16, plain and
# checkpointed (the fused attention kernels of LibTorch 2.x).
stage 60 "GeoDL transformer training steps at 256 x 256, batch 32, bf16" \
  "$bin/bench_memory" --device cuda --models segformer_b2 dofa_base --sample-size 256 --budget-mib 32768 \
  --batch 32 --repeats 5 --no-confirm --precision bf16
stage 150 "PyTorch reference training steps, batch 64, fp32 and bf16" \
  "$python" "$repo/benchmarks/reference/pytorch_gpu_train_step.py" --batch 64 --steps 20

# 4. NCCL with one rank, and Gloo, each against the mean of the shards' gradients.
for backend in nccl gloo; do
  stage 60 "data-parallel check on cuda, backend $backend, 1 rank" env RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 \
    LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$((29500 + RANDOM % 1000)) GEODL_CHECK_DEVICE=cuda \
    GEODL_CHECK_BACKEND=$backend "$bin/geodl_parallel_check"
done

# 5. The whole workflow on the GPU, on the Massachusetts data.
if [ -d "$bundle/massachusetts" ]; then
  m=$work/massachusetts
  mkdir -p "$m"
  d=$bundle/massachusetts
  printf '%s\n' "$d/22978945_15.tif,$d/massachusetts_buildings.gpkg,class,trn" \
    "$d/23429155_15.tif,$d/massachusetts_buildings.gpkg,class,val" > "$m/prep.csv"
  cat > "$m/config.yaml" <<YAML
global:
  samples_size: 256
  num_classes: 2
  data_path: $m
  number_of_bands: 3
  model_name: unetsmall
sample:
  prep_csv_file: $m/prep.csv
  samples_dist: 200
training:
  output_path: $m/model
  batch_size: 16
  num_epochs: 20
  learning_rate: 0.001
  step_size: 10
  gamma: 0.5
  seed: 1
YAML
  stage 60 "samples (Massachusetts)" "$geodl" -q samples "$m/config.yaml" &&
  stage 150 "train on cuda, 20 epochs, bf16" "$geodl" train "$m/config.yaml" --device cuda --precision bf16 &&
  stage 60 "classify the validation image on cuda" "$geodl" classify --input "$d/23429155_15.tif" \
    --model "$m/model/model.pt" --output "$m/val.tif" --device cuda &&
  stage 30 "building IoU of the classification" "$geodl" -q evaluate "$m/val.tif" "$d/massachusetts_buildings.gpkg" --field class
else
  say ""
  say "== the Massachusetts workflow: left out (no data in the bundle)"
fi

# 6. Classification speed on a generated scene, fp32 and bf16, and its determinism.
model=$work/massachusetts/model/model.pt
if [ -f "$model" ] && stage 60 "an 8000 x 8000 scene" "$geodl" make-scene "$work/scene" --size 8000 --seed 7; then
  for p in fp32 bf16 fp32; do
    sample_gpu "$work/util_classify.csv" & sampler=$!
    t0=$(date +%s.%N)
    stage 90 "classify 64 Mpx on cuda, $p" "$geodl" -q classify --input "$work/scene/scene_trn.tif" --model "$model" \
      --output "$work/scene_$p.tif" --device cuda --precision "$p"
    t1=$(date +%s.%N)
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
    say "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f Mpx/s (64 Mpx in %.2f s, reading to writing)", 64 / (b - a), b - a}'); $(utilisation "$work/util_classify.csv")"
    [ "$p" = fp32 ] && [ -f "$work/scene_fp32.first.tif" ] &&
      say "two fp32 runs: $(cmp -s "$work/scene_fp32.first.tif" "$work/scene_fp32.tif" && echo 'the same bytes' || echo 'DIFFERENT BYTES')"
    [ "$p" = fp32 ] && [ ! -f "$work/scene_fp32.first.tif" ] && mv "$work/scene_fp32.tif" "$work/scene_fp32.first.tif"
  done
fi
say ""
say "== done in $(( $(date +%s) - start )) s; figures in $figures"
