// Where and how the engine computes: device selection and LibTorch threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace geodl {

// The device a job runs on when none is asked for: resolveDevice picks it.
inline constexpr const char* kAutomaticDevice = "auto";

// "auto" becomes "cuda" when this build and machine have a GPU, else "cpu". "cpu",
// "cuda" and "cuda:N" are checked; anything else throws InputError.
std::string resolveDevice(const std::string& requested);

bool cudaAvailable();

// A CUDA GPU this build and machine see.
struct GpuInfo {
  int index = 0;      // cuda:index
  std::string name;   // "NVIDIA H200"
  double total_mib = 0, free_mib = 0;
  int major = 0, minor = 0;  // compute capability: 8.0 and later (Ampere) compute bfloat16
};
// Every GPU (none in a build on a LibTorch without CUDA, or without a driver).
std::vector<GpuInfo> gpus();
// The devices a user may choose: auto, cpu, then cuda and cuda:N for each GPU there is.
std::vector<std::string> availableDevices();
// What the engine computes with, for --version: "LibTorch 2.12.1, CUDA 13.0 (driver 13.0),
// cuDNN 9.20.0", or "LibTorch 1.13.1 (CPU only: no CUDA in this build)".
std::string libtorchDescription();
// The GPUs as text: "1 GPU: cuda:0 NVIDIA H200 (143771 MiB)", or why there are none.
std::string gpuDescription();

// A memory budget for training when none is given, in MiB: half the RAM the system
// reports available on the CPU; 90% of the free memory on a GPU.
double defaultMemoryBudgetMiB(const std::string& device);

// The CPU's bfloat16 instructions that oneDNN computes convolutions with: "AMX-BF16",
// "AVX512_BF16", or "" (none; or DNNL_MAX_CPU_ISA / ONEDNN_MAX_CPU_ISA set below them, as
// oneDNN then does not use them either). Detected at run time (cpuid, and the OS saving the
// registers).
std::string cpuBf16Instructions();
// The CPU's model name (/proc/cpuinfo), for benchmarks to say where they measured.
std::string cpuModelName();

// The precision of classification or training for `requested` (auto, fp32, bf16, fp16) on
// `device` (resolved): auto is bf16 on a CPU with cpuBf16Instructions() and on a GPU of
// compute capability 8.0 or later, fp16 on older GPUs, fp32 on other CPUs; bf16 is accepted
// where auto would give it, fp16 on GPUs, and each is refused elsewhere with InputError
// naming what is missing and the precision to use.
std::string resolvePrecision(const std::string& requested, const std::string& device);
// The same on a GPU `device` that is `gpu`.
std::string resolvePrecision(const std::string& requested, const std::string& device, const GpuInfo& gpu);

// cuDNN's choice of convolution algorithms on a GPU `device`: deterministic ones (the same
// bytes every run: classification, training's deterministic), or the fastest its autotuner
// measures (training). Nothing on the CPU.
void configureCudnn(const std::string& device, bool deterministic);

// The variables of OpenMP, oneDNN and LibTorch a user may set (OMP_NUM_THREADS,
// MKL_NUM_THREADS, OMP_PROC_BIND, OMP_STACKSIZE, ATEN_CPU_CAPABILITY, DNNL_MAX_CPU_ISA...)
// with a value their library does not accept are removed from the environment before
// LibTorch and oneDNN read them (a junk OMP_NUM_THREADS printed LibTorch's stack trace; the
// others were ignored silently or in the library's words): a warning for each, in GeoDL's
// words. OpenMP reads its own before GeoDL starts: it has said so itself, and GeoDL says
// what to do. Call first thing.
std::vector<std::string> dropBadRuntimeVariables();

// Sets LibTorch's intra-op threads; 0 means every available core. Returns the count set.
// Denormal floats are flushed to zero in every compute thread (they slow CPUs down).
int configureThreads(int threads);

// A mark in a GPU's queue of work (a CUDA event on the current stream): wait() returns once
// everything queued before mark() has run, not what was queued after. On the CPU, where work
// is done by the time it returns, both do nothing.
class DeviceFence {
 public:
  void mark(const std::string& device);
  void wait() const;

 private:
  std::shared_ptr<void> event_;
};

}  // namespace geodl
