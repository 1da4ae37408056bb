#!/usr/bin/env bash
# Installs whatever GeoDL needs to build, test and run that is not installed yet: Debian 12's
# packages, and from PyPI only what Debian lacks (the tests' Python references, the CUDA
# build's LibTorch). Run as root (or through sudo).
#
# QGIS comes from Debian's own bookworm-backports suite (3.40 LTR, built on Debian 12's GDAL,
# PROJ and Qt 5.15), signed by the same archive keyring as the main suite. A machine that has
# bookworm's QGIS 3.22 is upgraded to it.
#
# --cuda (or GEODL_CUDA=1) also installs, from PyPI, the LibTorch of GeoDL's CUDA build: the
# torch wheel and the NVIDIA libraries it loads, into ~/.cache/geodl/libtorch-VERSION
# (scripts/libtorch_wheel.sh; GEODL_LIBTORCH_WHEEL for another folder), which
# `scripts/build.sh --cuda` builds against. Only the wheels' C++ libraries and headers are
# used: GeoDL runs without Python. The CUDA 13 toolkit (nvcc, for
# LibTorch's CMake files) must be installed already; the GPU driver only where GPUs are.
set -euo pipefail
cuda=${GEODL_CUDA:-0}
for arg in "$@"; do
  case "$arg" in
    --cuda) cuda=1 ;;
    *) echo "install-deps: unknown argument '$arg' (give --cuda, or nothing)" >&2; exit 2 ;;
  esac
done
packages=(
  # build
  cmake ninja-build g++ pkg-config
  # engine (libgloo-dev: the headers of c10d's Gloo process group, for data-parallel training;
  # libopenblas0-openmp: Debian's LibTorch does its fp32 matrix products through libblas.so.3,
  # which is otherwise the reference BLAS, 37x slower here: transformers train 7-18x faster)
  libtorch-dev libgloo-dev libopenblas0-openmp
  # Qt for the plugin (QGIS itself is below, from backports)
  qtbase5-dev qttools5-dev qttools5-dev-tools
  # geospatial I/O
  libgdal-dev libtiff-dev libproj-dev libhdf5-dev
  # command line, config, tests, benchmarks
  libcli11-dev libyaml-cpp-dev nlohmann-json3-dev libgtest-dev libbenchmark-dev
  # headless desktop tests; PyTorch and h5py for the reference scripts (pip: what Debian lacks)
  xvfb xauth python3-torch python3-torchvision python3-h5py python3-gdal python3-pip
  # what segmentation-models-pytorch, timm and huggingface_hub import (they come from PyPI)
  python3-tqdm python3-filelock python3-fsspec python3-yaml python3-requests python3-packaging python3-pil
  # the distributed test watches a rank's file operations
  strace
)
# The references of tests that Debian lacks, from PyPI (the tests only: GeoDL never runs Python):
# safetensors; segmentation-models-pytorch (SegFormer, UPerNet) with timm and huggingface_hub,
# TorchGeo (DOFA) with kornia, which its dofa.py imports, without their dependencies (they would
# pull PyPI's torch over Debian's; Debian has the others, above).
python_references=("safetensors==0.5.3")
python_references_no_deps=("segmentation-models-pytorch==0.6.0" "timm==1.0.31" "huggingface_hub==0.26.5"
  "torchgeo==0.7.1" "kornia==0.7.4" "kornia_rs==0.2.0")
# The QGIS plugin, the desktop and qgis_process the end-to-end tests start: QGIS 3.40.
qgis_packages=(qgis qgis-providers libqgis-dev python3-qgis)
qgis_series=3.40
backports_list=/etc/apt/sources.list.d/geodl-bookworm-backports.sources

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
version_of() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || true; }

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
qgis_missing=()
for p in "${qgis_packages[@]}"; do
  if ! installed "$p" || [[ "$(version_of "$p")" != "$qgis_series".* ]]; then
    qgis_missing+=("$p")
  fi
done
install_debian_packages() {
  # bookworm-backports, once: skipped where any sources file already names the suite.
  if ! grep -rqsE '(^|[[:space:]])bookworm-backports([[:space:]]|$)' \
      /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "install-deps: adding Debian's bookworm-backports suite ($backports_list)"
    $sudo tee "$backports_list" >/dev/null <<'SOURCES'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  fi
  $sudo apt-get update -q
  if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: installing ${missing[*]}"
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
  echo "install-deps: installing QGIS $qgis_series from bookworm-backports: ${qgis_packages[*]}"
  $sudo apt-get install -y -q --no-install-recommends -t bookworm-backports "${qgis_packages[@]}"
  for p in "${qgis_packages[@]}"; do
    v=$(version_of "$p")
    if [[ "$v" != "$qgis_series".* ]]; then
      echo "install-deps: $p is at '$v' after installing, not QGIS $qgis_series" \
        "(does apt pin bookworm-backports below bookworm?)" >&2
      exit 1
    fi
  done
}

# The torch wheel of the CUDA build, pinned: 2.12.1 is the newest torch whose CUDA is 13 (13.0)
# and that is C++17, as GeoDL and the Qt 5 and QGIS 3.40 headers beside LibTorch's are built
# (2.13 and later need C++20). The NVIDIA wheels are those torch 2.12.1 asks for, at its versions; triton and
# the Python packages are left out (Python only). GEODL_TORCH_WHEEL_VERSION installs another
# torch 2.x of CUDA 13 beside the same NVIDIA wheels (their libraries keep their names), for a
# build that must match a machine's own torch: the GPU check's bundle (benchmarks/gpu_bundle.sh).
source "$(dirname "$0")/libtorch_wheel.sh"  # torch_wheel_version, libtorch_wheel
nvidia_wheels=(
  nvidia-cuda-runtime==13.0.96 nvidia-cublas==13.1.1.3 nvidia-cudnn-cu13==9.20.0.48
  nvidia-nccl-cu13==2.29.7 nvidia-cufft==12.0.0.61 nvidia-curand==10.4.0.35 nvidia-cusolver==12.0.4.66
  nvidia-cusparse==12.6.3.3 nvidia-cusparselt-cu13==0.8.1 nvidia-nvjitlink==13.0.88
  nvidia-cuda-nvrtc==13.0.88 nvidia-cuda-cupti==13.0.85 nvidia-nvtx==13.0.85 nvidia-cufile==1.15.1.6
  nvidia-nvshmem-cu13==3.4.5
)
install_libtorch_wheel() {
  local target=$libtorch_wheel
  if [ -f "$target/torch-$torch_wheel_version.dist-info/METADATA" ] &&
     [ -f "$target/nvidia/nccl/include/nccl.h" ]; then
    echo "install-deps: the torch $torch_wheel_version wheel (CUDA) is installed in $target"
    return
  fi
  if ! command -v nvcc >/dev/null && [ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
    echo "install-deps: --cuda needs the CUDA 13 toolkit (nvcc) installed, which is neither on PATH nor in" \
      "${CUDA_HOME:-/usr/local/cuda}; install it, or set CUDA_HOME" >&2
    exit 1
  fi
  echo "install-deps: installing torch $torch_wheel_version (CUDA 13.0) and its NVIDIA libraries from PyPI into $target"
  mkdir -p "$(dirname "$target")"
  rm -rf "$target.partial"
  # The wheels' tags are given, not taken from this machine's Python: only their C++ parts are
  # used. Debian 12's glibc is 2.36: every manylinux tag up to 2_28 fits.
  local platforms=()
  for tag in manylinux_2_28 manylinux_2_27 manylinux_2_25 manylinux_2_24 manylinux_2_18 manylinux_2_17 \
             manylinux2014 manylinux_2_12 manylinux2010 manylinux_2_5 manylinux1; do
    platforms+=(--platform "${tag}_x86_64")
  done
  /usr/bin/python3 -m pip install --quiet --no-deps --no-compile --disable-pip-version-check --root-user-action=ignore \
    --only-binary=:all: "${platforms[@]}" --python-version 3.11 \
    --target "$target.partial" "torch==$torch_wheel_version" "${nvidia_wheels[@]}"
  rm -rf "$target"
  mv "$target.partial" "$target"
  echo "install-deps: LibTorch $(cat "$target/torch/version.py" 2>/dev/null | sed -n "s/^__version__ = '\(.*\)'/\1/p") in $target ($(du -sh "$target" | cut -f1))"
}

cd "$(dirname "$0")/.."
if [ ${#missing[@]} -eq 0 ] && [ ${#qgis_missing[@]} -eq 0 ]; then
  echo "install-deps: all $((${#packages[@]} + ${#qgis_packages[@]})) packages are installed" \
    "(QGIS $(version_of qgis))"
else
  install_debian_packages
fi
# Into /usr/local (Debian's pip leaves /usr/lib's packages alone), only when missing.
if ! /usr/bin/python3 -c "import safetensors.torch" 2>/dev/null; then
  echo "install-deps: installing the tests' Python references from PyPI: ${python_references[*]}"
  $sudo /usr/bin/python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    --break-system-packages --only-binary=:all: "${python_references[@]}"
fi
if ! /usr/bin/python3 -c "import segmentation_models_pytorch, timm, torchgeo, kornia" 2>/dev/null; then
  echo "install-deps: installing the tests' Python references from PyPI: ${python_references_no_deps[*]}"
  $sudo /usr/bin/python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    --break-system-packages --no-deps "${python_references_no_deps[@]}"
fi
[ "$cuda" = 1 ] && install_libtorch_wheel
exit 0
