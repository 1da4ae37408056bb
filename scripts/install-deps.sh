#!/usr/bin/env bash
# Installs, from Debian 12's packages alone, whatever GeoDL needs to build, test and run
# that is not installed yet. Run as root (or through sudo).
#
# QGIS comes from Debian's own bookworm-backports suite (3.40 LTR, built on Debian 12's GDAL,
# PROJ and Qt 5.15), signed by the same archive keyring as the main suite. A machine that has
# bookworm's QGIS 3.22 is upgraded to it.
set -euo pipefail
packages=(
  # build
  cmake ninja-build g++ pkg-config
  # engine (libgloo-dev: the headers of c10d's Gloo process group, for data-parallel training)
  libtorch-dev libgloo-dev
  # Qt for the plugin (QGIS itself is below, from backports)
  qtbase5-dev qttools5-dev qttools5-dev-tools
  # geospatial I/O
  libgdal-dev libproj-dev libhdf5-dev
  # command line, config, tests, benchmarks
  libcli11-dev libyaml-cpp-dev nlohmann-json3-dev libgtest-dev libbenchmark-dev
  # headless desktop tests; PyTorch and h5py for the reference scripts
  xvfb xauth python3-torch python3-torchvision python3-h5py python3-gdal
  # the distributed test watches a rank's file operations
  strace
)
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
if [ ${#missing[@]} -eq 0 ] && [ ${#qgis_missing[@]} -eq 0 ]; then
  echo "install-deps: all $((${#packages[@]} + ${#qgis_packages[@]})) packages are installed" \
    "(QGIS $(version_of qgis))"
  exit 0
fi

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
