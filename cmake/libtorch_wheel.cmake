# LibTorch from the PyPI torch wheel (CUDA), as `pip install --target GEODL_LIBTORCH_WHEEL`
# laid it out: torch/{include,lib,share/cmake} and nvidia/*/lib beside it. Included by the
# top-level CMakeLists.txt before find_package(Torch). The configure step's traps are
# handled here, not in the user's shell:
#  - Debian's LibTorch 1.13 in /usr/lib must not be found instead: TorchConfig.cmake looks
#    for its libraries with PATHS, which CMake searches after the system folders, so the
#    wheel's torch folder goes first on CMAKE_PREFIX_PATH (its lib/ is searched before them),
#    and the libraries found are checked below.
#  - nvcc and the toolkit: Caffe2's cuda.cmake needs nvcc (FindCUDA), also where it is not on
#    PATH; the toolkit is taken from CUDA_HOME, CUDA_PATH or /usr/local/cuda.
#  - NVTX: LibTorch 2.x wants NVTX 3, which is header-only; the toolkit's is used (nvtx3/).
#  - cuDNN: the engine calls cuDNN only through LibTorch, whose libcudnn comes with the wheel
#    (nvidia/cudnn/lib, found through libtorch_cuda's own RPATH): no cuDNN search is needed,
#    and Caffe2's (which misses the wheel's layout) is switched off.
#  - The CUDA architectures: Caffe2 detects them for nvcc's flags; GeoDL compiles no CUDA
#    sources, so the list only has to be valid (the H200's 9.0 and Ampere's 8.0).
#  - Link and run time: geodl, the tests and the plugin find torch/lib through their RUNPATH,
#    also once installed; the NVIDIA libraries are found through torch's libraries' RPATH (and
#    by the linker through -rpath-link), before any older copy on the system. No Python.
get_filename_component(GEODL_LIBTORCH_WHEEL "${GEODL_LIBTORCH_WHEEL}" ABSOLUTE)
set(_geodl_torch "${GEODL_LIBTORCH_WHEEL}/torch")
if(NOT EXISTS "${_geodl_torch}/share/cmake/Torch/TorchConfig.cmake")
  message(FATAL_ERROR "GEODL_LIBTORCH_WHEEL is '${GEODL_LIBTORCH_WHEEL}', which holds no torch wheel "
                      "(torch/share/cmake/Torch is missing): run scripts/install-deps.sh --cuda, or give "
                      "the folder that `pip install --target` filled")
endif()
list(PREPEND CMAKE_PREFIX_PATH "${_geodl_torch}")
set(Torch_DIR "${_geodl_torch}/share/cmake/Torch" CACHE PATH "LibTorch's CMake folder (the wheel's)" FORCE)

if(NOT CUDA_TOOLKIT_ROOT_DIR)
  find_program(GEODL_NVCC nvcc HINTS ENV CUDA_HOME ENV CUDA_PATH PATH_SUFFIXES bin
               PATHS /usr/local/cuda/bin DOC "nvcc of the CUDA toolkit LibTorch's CMake files need")
  if(NOT GEODL_NVCC)
    message(FATAL_ERROR "the CUDA build needs the CUDA toolkit (nvcc), which is neither on PATH nor in "
                        "CUDA_HOME or /usr/local/cuda: install the CUDA 13 toolkit, or give "
                        "-DCUDA_TOOLKIT_ROOT_DIR=<its folder>")
  endif()
  get_filename_component(_geodl_cuda_bin "${GEODL_NVCC}" DIRECTORY)
  get_filename_component(CUDA_TOOLKIT_ROOT_DIR "${_geodl_cuda_bin}" DIRECTORY)
  set(CUDA_TOOLKIT_ROOT_DIR "${CUDA_TOOLKIT_ROOT_DIR}" CACHE PATH "The CUDA toolkit")
endif()
set(CUDAToolkit_ROOT "${CUDA_TOOLKIT_ROOT_DIR}")
if(NOT CMAKE_CUDA_COMPILER)
  set(CMAKE_CUDA_COMPILER "${CUDA_TOOLKIT_ROOT_DIR}/bin/nvcc")
endif()
if(NOT EXISTS "${CUDA_TOOLKIT_ROOT_DIR}/include/nvtx3/nvToolsExt.h")
  message(FATAL_ERROR "the CUDA toolkit in ${CUDA_TOOLKIT_ROOT_DIR} has no NVTX 3 headers (include/nvtx3), "
                      "which LibTorch 2's CMake files need: install the toolkit's NVTX (cuda-nvtx)")
endif()
set(CAFFE2_USE_CUDNN OFF CACHE BOOL "cuDNN through LibTorch only (the wheel's)" FORCE)
set(USE_CUDNN OFF CACHE BOOL "cuDNN through LibTorch only (the wheel's)" FORCE)
if(NOT TORCH_CUDA_ARCH_LIST)
  set(TORCH_CUDA_ARCH_LIST "8.0;9.0" CACHE STRING "CUDA architectures of nvcc's flags (GeoDL compiles no CUDA sources)")
endif()

set(CMAKE_INSTALL_RPATH_USE_LINK_PATH ON)  # the installed geodl and plugin find torch/lib too
# The linker resolves libtorch_cuda's own libraries (NCCL, cuDNN, cuBLAS...) in the wheel's
# nvidia/*/lib, as the loader does through its RPATH, not in an older copy on the system (the
# toolkit's NCCL lacks symbols LibTorch 2.12 calls).
file(GLOB _geodl_nvidia_lib_dirs LIST_DIRECTORIES true "${GEODL_LIBTORCH_WHEEL}/nvidia/*/lib")
string(JOIN ":" _geodl_rpath_link ${_geodl_nvidia_lib_dirs} "${_geodl_torch}/lib")
add_link_options("LINKER:-rpath-link,${_geodl_rpath_link}")

# Called after find_package(Torch): the libraries must be the wheel's.
function(geodl_check_libtorch_wheel)
  foreach(_lib IN ITEMS TORCH_LIBRARY c10_LIBRARY)
    if(${_lib} AND NOT ${_lib} MATCHES "^${GEODL_LIBTORCH_WHEEL}/")
      message(FATAL_ERROR "LibTorch's ${_lib} was found at ${${_lib}}, not in the wheel's folder "
                          "${GEODL_LIBTORCH_WHEEL}: remove the build folder and configure again")
    endif()
  endforeach()
  if(NOT TARGET torch_cuda)
    message(FATAL_ERROR "the torch wheel in ${GEODL_LIBTORCH_WHEEL} has no CUDA (torch_cuda): install a CUDA "
                        "build (scripts/install-deps.sh --cuda does)")
  endif()
endfunction()
