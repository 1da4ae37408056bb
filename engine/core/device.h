// Where and how the engine computes: device selection and LibTorch threads.
#pragma once

#include <string>

namespace geodl {

// The device a job runs on when none is asked for: resolveDevice picks it.
inline constexpr const char* kAutomaticDevice = "auto";

// "auto" becomes "cuda" when this build and machine have a GPU, else "cpu". "cpu",
// "cuda" and "cuda:N" are checked; anything else throws InputError.
std::string resolveDevice(const std::string& requested);

bool cudaAvailable();

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

// The precision of classification or training for `requested` (auto, fp32, bf16) on
// `device` (resolved): auto is bf16 on a CPU with cpuBf16Instructions() and fp32 elsewhere
// (GPUs before Ampere have no bfloat16: ask for it); bf16 is accepted on a GPU and on a
// CPU with the instructions, and refused elsewhere with InputError naming them.
std::string resolvePrecision(const std::string& requested, const std::string& device);

// Sets LibTorch's intra-op threads; 0 means every available core. Returns the count set.
// Denormal floats are flushed to zero in every compute thread (they slow CPUs down).
int configureThreads(int threads);

}  // namespace geodl
