// The digests GeoDL's files carry to tell a damaged file from a good one (model weights,
// training checkpoints, the datasets of sample stores): FNV-1a over bytes, kept as 16 hex
// digits. Standard library only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace geodl {

constexpr uint64_t kDigestStart = 1469598103934665603ull;

inline void addToDigest(uint64_t& hash, const void* data, size_t n) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
}

inline std::string digestText(uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace geodl
