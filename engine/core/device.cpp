#include "core/device.h"

#include <torch/cuda.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <fstream>
#include <sstream>
#include <thread>

#ifdef GEODL_WITH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

#include "base/errors.h"

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

double defaultMemoryBudgetMiB(const std::string& device) {
#ifdef GEODL_WITH_CUDA
  if (device.rfind("cuda", 0) == 0) {
    const auto colon = device.find(':');
    c10::cuda::CUDAGuard guard(colon == std::string::npos ? 0 : std::stoi(device.substr(colon + 1)));
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) == cudaSuccess) return 0.9 * double(free) / (1024.0 * 1024.0);
  }
#endif
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    double kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib / 1024.0 / 2.0;
  }
  return 4096;  // no /proc: a modest default
}

int configureThreads(int threads) {
  if (threads < 0) throw InputError("the number of threads cannot be negative");
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  // Far more threads than cores only thrashes (100000 never finished starting).
  if (threads > 8 * cores)
    throw InputError("threads is " + std::to_string(threads) + ": use at most " + std::to_string(8 * cores) +
                     " (8 per core; this machine has " + std::to_string(cores) + "), or 0 for one per core");
  if (threads == 0) threads = cores;
  at::set_num_threads(threads);
  // Tiny gradients late in training become denormal floats, which the CPU computes up to
  // ten times slower: flush them to zero in this thread and in every worker of the pool.
  at::globalContext().setFlushDenormal(true);
  at::parallel_for(0, threads, 1, [](int64_t, int64_t) { at::globalContext().setFlushDenormal(true); });
  return threads;
}

}  // namespace geodl
