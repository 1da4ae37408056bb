#!/usr/bin/env bash
# Prepares, on this machine, what the GPU check (benchmarks/gpu_check.sh) runs on a lent GPU
# machine, which has PyTorch's wheel but no GDAL, PROJ, HDF5 or yaml-cpp and no network:
# the whole engine (geodl, bench_memory, the GPU tests, the data-parallel check) built
# against the same torch as that machine's Python (GEODL_GPU_TORCH, default 2.11.0: a
# LibTorch is only ABI-compatible with itself), the Debian libraries they need beyond the
# C library and LibTorch (compressed), and the Massachusetts data. Into BUNDLE (default .gpu,
# ignored by git), which the device tool carries:
#   run(command="benchmarks/gpu_check.sh", carry=[".gpu"])
# Usage: benchmarks/gpu_bundle.sh [BUNDLE]
set -euo pipefail
repo=$(cd "$(dirname "$(realpath "$0")")/.." && pwd)
cd "$repo"
bundle=$(realpath -m "${1:-.gpu}")
torch_version=${GEODL_GPU_TORCH:-2.11.0}
wheel=build-gpu/libtorch
build=build-gpu/build
targets="geodl bench_memory geodl_core_gpu_tests geodl_parallel_check"

GEODL_TORCH_WHEEL_VERSION=$torch_version GEODL_LIBTORCH_WHEEL=$wheel scripts/install-deps.sh --cuda
GEODL_LIBTORCH_WHEEL=$wheel GEODL_CUDA_BUILD_DIR=$build GEODL_TARGETS="$targets" \
  scripts/build.sh --cuda -DGEODL_WERROR=ON

rm -rf "$bundle.partial"
mkdir -p "$bundle.partial/bin" "$bundle.partial/lib"
for t in engine/geodl benchmarks/bench_memory tests/geodl_core_gpu_tests tests/geodl_parallel_check; do
  strip -o "$bundle.partial/bin/$(basename "$t")" "$build/$t"
done
# The libraries the programs load, less those the GPU machine has: LibTorch and the NVIDIA
# libraries (its torch wheel's), the C library's, the C++ runtime (newer there), the driver.
wheel_dir=$(realpath "$wheel")
for b in "$bundle.partial"/bin/*; do ldd "$b"; done | awk '$3 ~ /^\// {print $3}' | sort -u |
  while read -r lib; do
    real=$(realpath "$lib")
    case "$real" in "$wheel_dir"/*) continue ;; esac
    case "$(basename "$lib")" in
      libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libresolv.so.*|libutil.so.*) continue ;;
      libstdc++.so.*|libgcc_s.so.*|libcuda.so.*|libnvidia-*) continue ;;
    esac
    cp -L "$lib" "$bundle.partial/lib/$(basename "$lib")"
  done
tar -C "$bundle.partial" -cf - lib | xz -T0 -6 > "$bundle.partial/lib.tar.xz"
rm -rf "$bundle.partial/lib"
data=$repo/../shared/data/massachusetts
if [ -d "$data" ]; then
  mkdir -p "$bundle.partial/massachusetts"
  cp "$data"/22978945_15.tif "$data"/23429155_15.tif "$data"/massachusetts_buildings.gpkg "$bundle.partial/massachusetts/"
else
  echo "gpu_bundle: no Massachusetts data in $data: the check's end-to-end stage will be left out" >&2
fi
echo "$torch_version" > "$bundle.partial/TORCH_VERSION"
git -C "$repo" rev-parse --short HEAD > "$bundle.partial/COMMIT" 2>/dev/null || echo unknown > "$bundle.partial/COMMIT"
rm -rf "$bundle"
mv "$bundle.partial" "$bundle"
size=$(du -sm "$bundle" | cut -f1)
tree=$(git -C "$repo" ls-files -z | xargs -0 du -cm 2>/dev/null | tail -1 | cut -f1)
echo "gpu_bundle: $bundle, ${size} MiB (with the working tree's ${tree} MiB: the device tool carries 64 MiB at most)"
[ $((size + tree)) -lt 64 ] || { echo "gpu_bundle: too large to carry" >&2; exit 1; }
