#!/usr/bin/env bash
# The memory benchmark, side by side with its PyTorch reference in one run:
# GeoDL's plain and checkpointed training steps (bench_memory), then geo-deep-learning's
# UNets in PyTorch, plain and with torch.utils.checkpoint (Debian's python3-torch).
# Usage: benchmarks/run_memory_benchmark.sh BUILD_DIR [MODEL...]   (default: unetsmall unet)
set -euo pipefail
source "$(dirname "$(realpath "$0")")/preamble.sh"
build=${1:?usage: run_memory_benchmark.sh BUILD_DIR [MODEL...]}
shift
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(unetsmall unet)
echo "== GeoDL (LibTorch C++), $(nproc) cores, $cpu"
"$build/benchmarks/bench_memory" --models "${models[@]}" --threads "$threads"
echo
echo "== Reference: PyTorch, geo-deep-learning's UNets"
ref_models=()
for m in "${models[@]}"; do
  case "$m" in unet|unetsmall) ref_models+=("$m") ;; esac
done
if [ ${#ref_models[@]} -eq 0 ]; then
  echo "(no reference for ${models[*]})"
elif /usr/bin/python3 -c 'import torch' 2>/dev/null; then
  /usr/bin/python3 "$here/reference/pytorch_train_step.py" --models "${ref_models[@]}" --threads "$threads"
else
  echo "(skipped: Debian's python3-torch is not installed; scripts/install-deps.sh installs it)"
fi
