#!/usr/bin/env bash
# Installs, from Debian 12's packages alone, whatever GeoDL needs to build, test and run
# that is not installed yet. Run as root (or through sudo).
set -euo pipefail
packages=(
  # build
  cmake ninja-build g++ pkg-config
  # engine (libgloo-dev: the headers of c10d's Gloo process group, for data-parallel training)
  libtorch-dev libgloo-dev
  # QGIS plugin (and the desktop the end-to-end tests start)
  libqgis-dev qgis qgis-providers python3-qgis qtbase5-dev qttools5-dev qttools5-dev-tools
  # geospatial I/O
  libgdal-dev libproj-dev libhdf5-dev
  # command line, config, tests, benchmarks
  libcli11-dev libyaml-cpp-dev nlohmann-json3-dev libgtest-dev libbenchmark-dev
  # headless desktop tests; PyTorch and h5py for the reference scripts
  xvfb xauth python3-torch python3-torchvision python3-h5py python3-gdal
  # the distributed test watches a rank's file operations
  strace
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages are installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
