#include "core/device.h"

#include <torch/cuda.h>
#include <ATen/Parallel.h>

#include <thread>

#include "core/errors.h"

namespace geodl {

bool cudaAvailable() { return torch::cuda::is_available(); }

std::string resolveDevice(const std::string& requested) {
  if (requested.empty() || requested == "auto") return cudaAvailable() ? "cuda" : "cpu";
  if (requested == "cpu") return requested;
  if (requested.rfind("cuda", 0) == 0) {
    if (!cudaAvailable())
      throw InputError("device '" + requested +
                       "' asked for, but no CUDA GPU is usable by this build; use --device cpu");
    return requested;
  }
  throw InputError("unknown device '" + requested + "'; use auto, cpu, cuda or cuda:N");
}

int configureThreads(int threads) {
  if (threads < 0) throw InputError("the number of threads cannot be negative");
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  at::set_num_threads(threads);
  return threads;
}

}  // namespace geodl
