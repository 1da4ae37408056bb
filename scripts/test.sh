#!/usr/bin/env bash
# Quick start, second command: installs what is missing, builds, runs every test (ctest).
# The one-thread unit tests (label "parallel") run two at a time (GEODL_TEST_JOBS), then the
# rest one at a time: they use both cores, or time signals and collective timeouts.
#
# Then, with GEODL_TEST_CUDA=1 (as CI runs it, .ci/run), the CUDA build: the same source on the
# torch wheel's LibTorch 2.12 (CUDA 13, NCCL), with -Werror; its engine, core tests and command
# line run on the CPU (the GPU tests skip, with a message, where there is no GPU), its
# data-parallel check on two ranks, and it reads the model the Debian build trained.
set -euo pipefail
cd "$(dirname "$0")/.."
cuda=${GEODL_TEST_CUDA:-0}
if [ "$cuda" = 1 ]; then scripts/install-deps.sh --cuda; else scripts/install-deps.sh; fi
scripts/build.sh -DGEODL_WERROR=ON
status=0
(
  cd build
  ctest --output-on-failure --timeout 900 -j "${GEODL_TEST_JOBS:-2}" -L '^parallel$' "$@" || exit 1
) || status=$?
( cd build && ctest --output-on-failure --timeout 900 -LE '^parallel$' "$@" ) || status=$?
[ "$cuda" = 1 ] || exit $status

echo "test: the CUDA build (build-cuda, LibTorch of the torch wheel)"
start=$(date +%s)
GEODL_TARGETS="geodl geodl_core_tests geodl_core_gpu_tests geodl_parallel_check" \
  scripts/build.sh --cuda -DGEODL_WERROR=ON
echo "test: the CUDA build took $(( $(date +%s) - start )) s"
(
  cd build-cuda
  ctest --output-on-failure --timeout 900 -j "${GEODL_TEST_JOBS:-2}" -L '^parallel$' -R '^[A-Za-z0-9_]+\.' || exit 1
  ctest --output-on-failure --timeout 900 -L 'gpu|distributed' -R 'geodl_core_gpu_tests|parallel_gradient_allreduce' &&
  ctest --output-on-failure --timeout 900 \
    -R '^cli_(version|models|batch_size|make_scene|samples|train|info|classify|evaluate|train_nccl_without_gpu)$'
) || status=$?
# A model file of the Debian build (LibTorch 1.13) loads and classifies in the CUDA build.
model=build/tests/cli_scene/model/model.pt
if [ -f "$model" ]; then
  build-cuda/engine/geodl info "$model" >/dev/null &&
  build-cuda/engine/geodl -q classify --input build/tests/cli_scene/scene_val.tif --model "$model" \
    --output build-cuda/cross/classified.tif --device cpu --window 64 &&
  echo "test: the Debian build's model classifies in the CUDA build" || status=1
else
  echo "test: $model is missing (the Debian build's cli_train makes it)" >&2
  status=1
fi
echo "test: the CUDA build's build and tests took $(( $(date +%s) - start )) s"
exit $status
