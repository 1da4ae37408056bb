// Where and how the engine computes: device selection and LibTorch threads.
#pragma once

#include <string>

namespace geodl {

// "auto" becomes "cuda" when this build and machine have a GPU, else "cpu". "cpu",
// "cuda" and "cuda:N" are checked; anything else throws InputError.
std::string resolveDevice(const std::string& requested);

bool cudaAvailable();

// Sets LibTorch's intra-op threads; 0 means every available core. Returns the count set.
int configureThreads(int threads);

}  // namespace geodl
