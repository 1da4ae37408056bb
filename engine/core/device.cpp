#include "core/device.h"

#include <torch/cuda.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <regex>
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

namespace {

// A variable of the libraries GeoDL runs on that a user may set, and what it accepts.
struct RuntimeVariable {
  const char* name;
  const char* accepts;  // for the message
  bool (*valid)(const std::string& value);
  bool read_at_start;   // OpenMP (libgomp) reads it before GeoDL starts, and said so itself
};

bool matches(const std::string& value, const char* pattern) {
  return std::regex_match(value, std::regex(pattern, std::regex::icase | std::regex::extended));
}
bool positiveList(const std::string& v) {  // "4" or "4,2": OpenMP's nested levels
  if (v.empty() || v.size() > 64 || !matches(v, "[0-9]{1,6}(,[0-9]{1,6})*")) return false;
  std::stringstream parts(v);
  for (std::string part; std::getline(parts, part, ',');)
    if (std::stoi(part) <= 0) return false;
  return true;
}
bool wholeNumber(const std::string& v) { return matches(v, "[0-9]{1,9}"); }
bool positiveNumber(const std::string& v) { return wholeNumber(v) && std::stol(v) > 0; }
bool stackSize(const std::string& v) {  // libgomp: a size in KiB by default, at least 16 KiB
  std::smatch m;
  if (!std::regex_match(v, m, std::regex("([0-9]{1,12}) *([bkmg]?)", std::regex::icase))) return false;
  const char unit = m[2].length() ? char(std::tolower(m[2].str()[0])) : 'k';
  const double bytes = std::stod(m[1].str()) * (unit == 'b' ? 1 : unit == 'k' ? 1024 : unit == 'm' ? 1 << 20 : 1 << 30);
  return bytes >= 16 * 1024;
}

const std::vector<RuntimeVariable>& runtimeVariables() {
  static const std::vector<RuntimeVariable> variables = {
      {"OMP_NUM_THREADS", "a positive whole number", positiveList, false},
      {"MKL_NUM_THREADS", "a positive whole number", positiveList, false},
      {"OMP_THREAD_LIMIT", "a positive whole number", positiveNumber, true},
      {"OMP_MAX_ACTIVE_LEVELS", "a whole number", wholeNumber, true},
      {"OMP_DYNAMIC", "true or false", [](const std::string& v) { return matches(v, " *(true|false) *"); }, true},
      {"OMP_WAIT_POLICY", "active or passive", [](const std::string& v) { return matches(v, " *(active|passive) *"); },
       true},
      {"OMP_PROC_BIND", "true, false, close, spread, master or primary (a list of them for nested levels)",
       [](const std::string& v) { return matches(v, "(true|false|close|spread|master|primary)(,(close|spread|master|primary))*"); },
       true},
      {"OMP_PLACES", "threads, cores, sockets, ll_caches or numa_domains (with a count in parentheses), or a list of "
                     "places in braces",
       [](const std::string& v) {
         return matches(v, " *(threads|cores|sockets|ll_caches|numa_domains)( *\\( *[0-9]+ *\\))? *") ||
                matches(v, " *\\{.*") || matches(v, " *![{].*");
       },
       true},
      {"OMP_STACKSIZE", "a size of at least 16K (B, K, M or G; K when no unit)", stackSize, true},
      {"OMP_SCHEDULE", "static, dynamic, guided or auto, with an optional chunk size (dynamic,4)",
       [](const std::string& v) {
         return matches(v, " *((monotonic|nonmonotonic):)?(static|dynamic|guided|auto)( *, *[0-9]+)? *");
       },
       true},
      {"OMP_DISPLAY_ENV", "true, false or verbose",
       [](const std::string& v) { return matches(v, " *(true|false|verbose) *"); }, true},
      {"GOMP_SPINCOUNT", "a whole number (with k, M, G or T) or infinite",
       [](const std::string& v) { return matches(v, " *([0-9]+ *[kmgt]?|infinite|infinity) *"); }, true},
      {"GOMP_CPU_AFFINITY", "CPU numbers and ranges (0 3 1-2 4-15:2)",
       [](const std::string& v) { return matches(v, "[ ,]*[0-9]+(-[0-9]+(:[0-9]+)?)?([ ,]+[0-9]+(-[0-9]+(:[0-9]+)?)?)*[ ,]*"); },
       true},
      {"ATEN_CPU_CAPABILITY", "default, avx2 or avx512",
       [](const std::string& v) { return matches(v, "(default|avx2|avx512|zvector|vsx)"); }, false},
      {"DNNL_MAX_CPU_ISA", "an instruction set oneDNN knows (SSE41, AVX, AVX2, AVX2_VNNI, AVX512_CORE, "
                           "AVX512_CORE_VNNI, AVX512_CORE_BF16, AVX512_CORE_AMX or ALL)",
       [](const std::string& v) {
         return matches(v, "(sse41|avx|avx2|avx2_vnni|avx512_core|avx512_core_vnni|avx512_core_bf16|avx512_core_fp16|"
                           "avx512_core_amx|avx512_core_amx_fp16|avx10_1_512|avx10_1_512_amx|avx10_1_512_amx_fp16|"
                           "avx2_vnni_2|all|default)");
       },
       false},
      {"DNNL_VERBOSE", "0, 1 or 2", [](const std::string& v) {
         const char* word = "(none|error|warn|check|profile_create|profile_exec|profile|dispatch|all|debuginfo=[0-9]+)";
         return matches(v, "[0-2]") || matches(v, (std::string(word) + "(," + word + ")*").c_str());
       }, false},
      {"DNNL_DEFAULT_FPMATH_MODE", "strict, bf16, f16, tf32 or any",
       [](const std::string& v) { return matches(v, "(strict|bf16|f16|tf32|any)"); }, false},
      {"DNNL_PRIMITIVE_CACHE_CAPACITY", "a whole number", wholeNumber, false},
  };
  return variables;
}

}  // namespace

std::vector<std::string> dropBadRuntimeVariables() {
  std::vector<std::string> warnings;
  for (const RuntimeVariable& variable : runtimeVariables()) {
    // oneDNN reads its variables under both names.
    std::vector<std::string> names = {variable.name};
    if (std::string(variable.name).rfind("DNNL_", 0) == 0) names.push_back("ONEDNN_" + std::string(variable.name).substr(5));
    for (const std::string& name : names) {
      const char* value = std::getenv(name.c_str());
      if (!value || variable.valid(value)) continue;
      const std::string text = value;
      warnings.push_back(name + " is '" + text.substr(0, 40) + "', not " + variable.accepts + ": it is ignored" +
                         (variable.read_at_start ? " (OpenMP said so above, in its words, as GeoDL started)" : "") +
                         (name == "OMP_NUM_THREADS" || name == "MKL_NUM_THREADS"
                              ? " (GeoDL's threads option sets the threads; unset it or give a number)"
                              : "; unset it or give such a value"));
      unsetenv(name.c_str());
    }
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
