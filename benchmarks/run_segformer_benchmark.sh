#!/usr/bin/env bash
# The transformers' memory and step time, side by side with their references in one run:
# GeoDL's plain and checkpointed training steps (bench_memory, with resnet34_unet for scale),
# then smp's Segformer (and for dofa_*, TorchGeo's DOFA with smp's UPerNet) on Debian's
# python3-torch, and the BLAS behind Debian's LibTorch (its fp32 matrix products, which the
# transformers' Linear layers are). GEODL_BENCH_MODELS: the transformers (default
# segformer_b0 segformer_b2).
# Usage: benchmarks/run_segformer_benchmark.sh BUILD_DIR [SAMPLE_SIZE [PRECISION]]  (256, fp32)
set -euo pipefail
source "$(dirname "$(realpath "$0")")/preamble.sh"
build=${1:?usage: run_segformer_benchmark.sh BUILD_DIR [SAMPLE_SIZE [PRECISION]]}
size=${2:-256} precision=${3:-fp32}
echo "== $(nproc) cores, $cpu; libblas.so.3: $(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)"
echo "== GeoDL (LibTorch C++)"
models=${GEODL_BENCH_MODELS:-segformer_b0 segformer_b2}
# shellcheck disable=SC2086
"$build/benchmarks/bench_memory" --models $models resnet34_unet --sample-size "$size" \
  --batch 4 --repeats 2 --threads "$threads" --precision "$precision" --no-confirm
echo
echo "== Reference: segmentation-models-pytorch's Segformer (TorchGeo's DOFA with smp's UPerNet), fp32"
if /usr/bin/python3 -c 'import segmentation_models_pytorch, torchgeo' 2>/dev/null; then
  # shellcheck disable=SC2086
  /usr/bin/python3 "$here/reference/smp_segformer_train_step.py" --models $models --sample-size "$size" \
    --threads "$threads"
else
  echo "(skipped: segmentation-models-pytorch or torchgeo is not installed; scripts/install-deps.sh installs them)"
fi
