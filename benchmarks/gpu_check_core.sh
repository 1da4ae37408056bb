# The GPU check of the compute core alone (issue 15), sourced by benchmarks/gpu_check.sh
# (its say, stage, figures, python, start) where no bundle of the whole engine for the
# machine's torch came along: builds the core against the wheel's LibTorch
# (-DGEODL_CORE_ONLY=ON) in GEODL_GPU_BUILD, runs the core tests labelled gpu (when
# GoogleTest is there), and bench_memory on the GPU:
#   1. the largest batch of unetsmall and unet at 256 x 256, plain and checkpointed, under a
#      32 GiB budget (confirmed by a step under the budget);
#   2. the seed's question: the largest batch of unetsmall and unet on the whole GPU
#      (budget: 90% of its memory), plain and checkpointed;
#   3. training-step time per sample at 256 x 256, batch 32, in fp32 and bf16 (autocast).
# About 8 minutes.
build=${GEODL_GPU_BUILD:-/tmp/geodl-gpu-build}
jobs=$(nproc)
site=$("$python" -c "import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))")

# 1. Build the core, its GPU tests and bench_memory against the wheel's LibTorch: its
# site-packages folder has the layout GEODL_LIBTORCH_WHEEL takes (torch/, nvidia/*/lib).
stage 300 "build (core only, LibTorch of the wheel)" bash -c "
  cmake -S '$repo' -B '$build' -G Ninja -DCMAKE_BUILD_TYPE=Release -DGEODL_CORE_ONLY=ON \
    -DGEODL_LIBTORCH_WHEEL='$site' > '$build.configure.log' 2>&1 ||
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
