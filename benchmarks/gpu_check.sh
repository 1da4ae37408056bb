#!/usr/bin/env bash
# The prepared GPU check (issue 15), for a machine with a CUDA GPU and nothing but PyTorch's
# wheel (as the device tool's machines): builds the compute core against the wheel's
# LibTorch (-DGEODL_CORE_ONLY=ON), runs the core tests labelled gpu (when GoogleTest is
# there), and bench_memory on the GPU:
#   1. the largest batch of unetsmall and unet at 256 x 256, plain and checkpointed, under a
#      32 GiB budget (confirmed by a step under the budget);
#   2. the seed's question: the largest batch of unetsmall and unet on the whole GPU
#      (budget: 90% of its memory), plain and checkpointed;
#   3. training-step time per sample at 256 x 256, batch 32, in fp32 and bf16 (autocast).
# Everything goes to one file, FIGURES (default $OUT/gpu_check.txt or ./gpu_check.txt), with
# the GPU, the driver and the LibTorch version. Each stage has its own time limit, so the whole
# script ends within about 8 minutes; a stage that fails or runs out of time is named in the
# file and the next one still runs.
# Usage: benchmarks/gpu_check.sh [FIGURES]
set -uo pipefail
repo=$(cd "$(dirname "$(realpath "$0")")/.." && pwd)
figures=${1:-${OUT:-.}/gpu_check.txt}
build=${GEODL_GPU_BUILD:-/tmp/geodl-gpu-build}
python=${PYTHON:-python3}
jobs=$(nproc)
start=$(date +%s)
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
torch_info=$("$python" -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.utils.cmake_prefix_path)" 2>&1)
say "PyTorch (version, CUDA, GPU seen, cmake folder): $torch_info"
read -r _ _ seen prefix <<< "$torch_info"
if [ "$seen" != True ]; then
  say "!! no CUDA GPU is seen by PyTorch: nothing to check"
  exit 1
fi

# 1. Build the core, its GPU tests and bench_memory against the wheel's LibTorch. The wheel is
# built with the pre-C++11 ABI or the new one: CMake takes it from TorchConfig.
stage 300 "build (core only, LibTorch of the wheel)" bash -c "
  cmake -S '$repo' -B '$build' -G Ninja -DCMAKE_BUILD_TYPE=Release -DGEODL_CORE_ONLY=ON \
    -DCMAKE_PREFIX_PATH='$prefix' -DCMAKE_CUDA_ARCHITECTURES=native > '$build.configure.log' 2>&1 ||
    { tail -30 '$build.configure.log'; exit 1; }
  grep -E 'GoogleTest|Torch' '$build.configure.log' | head -5
  cmake --build '$build' -j $jobs 2>&1 | grep -E 'error|warning: unused|FAILED' | head -40
  test -x '$build/benchmarks/bench_memory'" || { say "!! the build failed: see above"; exit 1; }

# 2. The core tests labelled gpu (skipped with a message where GoogleTest is missing).
if [ -f "$build/CTestTestfile.cmake" ]; then
  stage 90 "core tests labelled gpu" ctest --test-dir "$build" -L gpu --output-on-failure
else
  say ""
  say "== core tests labelled gpu: not built (no GoogleTest on this machine)"
fi

bench=$build/benchmarks/bench_memory
# 3. Largest batch under a 32 GiB budget, plain and checkpointed, with the step time.
stage 100 "max batch at 256 x 256 under 32 GiB, fp32 (bench_memory --device cuda)" \
  "$bench" --device cuda --models unetsmall unet --sample-size 256 --budget-mib 32768 --batch 16 --repeats 2
# 4. The seed's question: the largest batch on the whole GPU (90% of its memory).
whole=$("$python" -c "import torch; print(int(torch.cuda.get_device_properties(0).total_memory * 0.9 / 2**20))")
stage 150 "largest batch on the whole GPU ($whole MiB), fp32" \
  "$bench" --device cuda --models unetsmall unet --sample-size 256 --budget-mib "$whole" --batch 16 --repeats 2
# 5. Training-step throughput, fp32 against bf16 autocast, at a batch that fits both.
for p in fp32 bf16; do
  stage 60 "training steps at 256 x 256, batch 32, $p" \
    "$bench" --device cuda --models unetsmall unet --sample-size 256 --budget-mib "$whole" --batch 32 \
    --repeats 5 --no-confirm --precision "$p"
done
say ""
say "== done in $(( $(date +%s) - start )) s; figures in $figures"
