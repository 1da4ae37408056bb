# Sourced by install-deps.sh and build.sh: where the CUDA build's LibTorch (the PyPI torch
# wheel and its NVIDIA libraries) is installed. Outside any checkout, in the user's cache: one
# install serves every clone and build folder on the machine, as Debian's packages do; a new
# torch version goes beside the old. GEODL_LIBTORCH_WHEEL names another folder.
torch_wheel_version=${GEODL_TORCH_WHEEL_VERSION:-2.12.1}
libtorch_wheel=${GEODL_LIBTORCH_WHEEL:-${XDG_CACHE_HOME:-$HOME/.cache}/geodl/libtorch-$torch_wheel_version}
