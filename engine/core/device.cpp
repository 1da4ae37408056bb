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
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif
#include <torch/version.h>

#include "base/errors.h"

namespace geodl {

bool cudaAvailable() { return torch::cuda::is_available(); }

namespace {

// Name and compute capability of GPU `index` (no CUDA context is made on it).
GpuInfo gpuProperties(int index) {
  GpuInfo gpu;
  gpu.index = index;
#ifdef GEODL_WITH_CUDA
  cudaDeviceProp properties{};
  if (cudaAvailable() && cudaGetDeviceProperties(&properties, index) == cudaSuccess) {
    gpu.name = properties.name;
    gpu.major = properties.major;
    gpu.minor = properties.minor;
  }
#endif
  return gpu;
}

}  // namespace

std::vector<GpuInfo> gpus() {
  std::vector<GpuInfo> found;
#ifdef GEODL_WITH_CUDA
  if (!cudaAvailable()) return found;
  const int count = int(torch::cuda::device_count());
  for (int i = 0; i < count; ++i) {
    GpuInfo gpu = gpuProperties(i);
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(i));
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) == cudaSuccess) {
      gpu.free_mib = double(free) / (1024.0 * 1024.0);
      gpu.total_mib = double(total) / (1024.0 * 1024.0);
    }
    found.push_back(gpu);
  }
#endif
  return found;
}

std::vector<std::string> availableDevices() {
  std::vector<std::string> devices = {kAutomaticDevice, "cpu"};
  const auto found = gpus();
  if (!found.empty()) devices.push_back("cuda");
  for (const auto& gpu : found) devices.push_back("cuda:" + std::to_string(gpu.index));
  return devices;
}

#ifdef GEODL_WITH_CUDA
namespace {

// 13000 -> "13.0".
std::string cudaVersionText(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

}  // namespace
#endif

std::string libtorchDescription() {
  std::string text = std::string("LibTorch ") + TORCH_VERSION;
#ifdef GEODL_WITH_CUDA
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  text += ", CUDA " + cudaVersionText(runtime) +
          (driver > 0 ? " (driver " + cudaVersionText(driver) + ")" : std::string(" (no CUDA driver on this machine)"));
  const long cudnn = at::detail::getCUDAHooks().versionCuDNN();
  if (cudnn > 0)
    text += ", cuDNN " + std::to_string(cudnn / 10000) + "." + std::to_string(cudnn % 10000 / 100) + "." +
            std::to_string(cudnn % 100);
#else
  text += " (CPU only: no CUDA in this build)";
#endif
  return text;
}

std::string gpuDescription() {
#ifdef GEODL_WITH_CUDA
  const auto found = gpus();
  if (found.empty()) return "no GPU seen (CUDA reports none usable)";
  std::string text = std::to_string(found.size()) + (found.size() == 1 ? " GPU:" : " GPUs:");
  for (const auto& gpu : found)
    text += " cuda:" + std::to_string(gpu.index) + " " + gpu.name + " (" + std::to_string(int64_t(gpu.total_mib)) +
            " MiB)" + (&gpu == &found.back() ? "" : ",");
  return text;
#else
  return "no GPU: this build's LibTorch has no CUDA (GeoDL's CUDA build: scripts/install-deps.sh --cuda)";
#endif
}

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
  GpuInfo info;
  if (device.rfind("cuda", 0) == 0) {
    const auto colon = device.find(':');
    info = gpuProperties(colon == std::string::npos ? 0 : std::stoi(device.substr(colon + 1)));
  }
  return resolvePrecision(requested, device, info);
}

std::string resolvePrecision(const std::string& requested, const std::string& device, const GpuInfo& info) {
  if (requested == "fp32") return "fp32";
  if (requested != "bf16" && requested != "fp16" && !requested.empty() && requested != "auto")
    throw InputError("unknown precision '" + requested + "'; use auto, fp32, bf16 or fp16");
  if (device.rfind("cuda", 0) == 0) {
    const bool gpu_bf16 = info.major >= 8;
    if (requested == "fp16") return "fp16";
    if (requested == "bf16" && !gpu_bf16)
      throw InputError("bf16 needs a GPU of compute capability 8.0 or later (Ampere), and " + device + " (" +
                       info.name + ") is " + std::to_string(info.major) + "." + std::to_string(info.minor) +
                       "; use precision fp16 (or auto)");
    return gpu_bf16 ? "bf16" : "fp16";
  }
  if (requested == "fp16")
    throw InputError("fp16 is computed on GPUs only (with loss scaling in training); on the CPU use precision bf16 "
                     "(AVX512_BF16 or AMX-BF16) or fp32 (or auto)");
  const bool cpu_bf16 = !cpuBf16Instructions().empty();
  if (requested.empty() || requested == "auto") return cpu_bf16 ? "bf16" : "fp32";
  if (cpu_bf16) return "bf16";
  const std::string cap = maxCpuIsa();
  throw InputError("bf16 needs a CPU with AVX512_BF16 or AMX-BF16 instructions (or a GPU), and this one has " +
                   std::string(cap.empty() ? "neither" : "none that oneDNN may use (its ISA is capped at " + cap + ")") +
                   "; use precision fp32 (or auto)");
}

void configureCudnn(const std::string& device, bool deterministic) {
  if (device.rfind("cuda", 0) != 0) return;
  at::globalContext().setDeterministicCuDNN(deterministic);
  at::globalContext().setBenchmarkCuDNN(!deterministic);
}

std::vector<std::string> dropBadThreadVariables() {
  std::vector<std::string> warnings;
  for (const char* name : {"OMP_NUM_THREADS", "MKL_NUM_THREADS"}) {
    const char* value = std::getenv(name);
    if (!value) continue;
    const std::string text = value;
    bool ok = !text.empty();
    std::stringstream parts(text);
    for (std::string part; ok && std::getline(parts, part, ',');)
      ok = !part.empty() && part.size() < 7 && part.find_first_not_of("0123456789") == std::string::npos &&
           std::stoi(part) > 0;
    if (ok) continue;
    warnings.push_back(std::string(name) + " is '" + text.substr(0, 40) +
                       "', not a positive whole number: it is ignored (GeoDL's threads option sets the threads; "
                       "unset it or give a number)");
    unsetenv(name);
  }
  return warnings;
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

void DeviceFence::mark(const std::string& device) {
#ifdef GEODL_WITH_CUDA
  if (device.rfind("cuda", 0) != 0) return;
  const c10::Device d(device);
  const c10::DeviceIndex index = d.has_index() ? d.index() : c10::cuda::current_device();
  c10::cuda::CUDAGuard guard(index);  // the event on the stream's device
  cudaEvent_t event = nullptr;
  if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess)
    throw Error("cannot create a CUDA event on " + device);
  event_.reset(static_cast<void*>(event), [](void* e) { cudaEventDestroy(static_cast<cudaEvent_t>(e)); });
  if (cudaEventRecord(event, c10::cuda::getCurrentCUDAStream(index).stream()) != cudaSuccess)
    throw Error("cannot record a CUDA event on " + device);
#else
  (void)device;
#endif
}

void DeviceFence::wait() const {
#ifdef GEODL_WITH_CUDA
  if (event_) {
    const cudaError_t status = cudaEventSynchronize(static_cast<cudaEvent_t>(event_.get()));
    if (status != cudaSuccess) throw Error(std::string("the GPU failed: ") + cudaGetErrorString(status));
  }
#endif
}

}  // namespace geodl
