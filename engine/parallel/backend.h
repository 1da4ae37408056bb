// The collectives' library of a job with several processes: Gloo (CPUs, and GPUs through
// the CPU) or NCCL (GPUs; GeoDL's CUDA build). Standard library only; defined in
// process_group.cpp.
#pragma once

#include <string>

namespace geodl {

// Whether this build has NCCL (the CUDA build on the torch wheel's LibTorch), and its
// version ("2.29.7"; empty without).
bool ncclAvailable();
std::string ncclVersion();
// The collectives' backend for a run on `device` (resolved: cpu, cuda, cuda:N): `requested`
// auto is nccl on a GPU when the build has it, else gloo; nccl is refused (InputError, with
// what to do) without a GPU or NCCL; gloo works everywhere (CUDA tensors too, through the CPU).
std::string resolveBackend(const std::string& requested, const std::string& device);

}  // namespace geodl
