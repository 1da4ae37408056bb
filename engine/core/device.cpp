#include "core/device.h"

#include <torch/cuda.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

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

namespace {

// oneDNN's ISA cap, upper case ("" when unset).
std::string maxCpuIsa() {
  for (const char* name : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"})
    if (const char* v = std::getenv(name); v && *v) {
      std::string isa = v;
      std::transform(isa.begin(), isa.end(), isa.begin(), [](unsigned char c) { return char(std::toupper(c)); });
      return isa;
    }
  return "";
}

}  // namespace

std::string cpuModelName() {
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

std::string cpuBf16Instructions() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(1, 0, &a, &b, &c, &d) || !(c & (1u << 27))) return "";  // no OSXSAVE
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  const uint64_t xcr0 = (uint64_t(hi) << 32) | lo;
  const bool zmm = (xcr0 & 0xe6) == 0xe6;                 // the OS saves AVX-512's registers
  const bool tiles = (xcr0 & (3u << 17)) == (3u << 17);  // and AMX's tiles
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return "";
  const bool amx_bf16 = (d >> 22) & 1u;
  unsigned a1 = 0, b1 = 0, c1 = 0, d1 = 0;
  const bool avx512_bf16 = __get_cpuid_count(7, 1, &a1, &b1, &c1, &d1) && ((a1 >> 5) & 1u);
  const std::string cap = maxCpuIsa();
  const bool cap_amx = cap.empty() || cap == "ALL" || cap.find("AMX") != std::string::npos;
  const bool cap_bf16 = cap_amx || cap == "AVX512_CORE_BF16" || cap == "AVX512_CORE_FP16";
  if (zmm && tiles && amx_bf16 && cap_amx) return "AMX-BF16";
  if (zmm && avx512_bf16 && cap_bf16) return "AVX512_BF16";
#endif
  return "";
}

std::string resolvePrecision(const std::string& requested, const std::string& device) {
  const bool cpu_bf16 = device == "cpu" && !cpuBf16Instructions().empty();
  if (requested.empty() || requested == "auto") return cpu_bf16 ? "bf16" : "fp32";
  if (requested == "fp32") return "fp32";
  if (requested != "bf16") throw InputError("unknown precision '" + requested + "'; use auto, fp32 or bf16");
  if (device.rfind("cuda", 0) == 0 || cpu_bf16) return "bf16";
  const std::string cap = maxCpuIsa();
  throw InputError("bf16 needs a CPU with AVX512_BF16 or AMX-BF16 instructions (or a GPU), and this one has " +
                   std::string(cap.empty() ? "neither" : "none that oneDNN may use (its ISA is capped at " + cap + ")") +
                   "; use precision fp32 (or auto)");
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
