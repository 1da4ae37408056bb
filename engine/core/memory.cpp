#include "core/memory.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include <torch/version.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <map>
#include <vector>

#ifdef GEODL_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace geodl {

namespace {

constexpr size_t kAlignment = 64;  // what LibTorch's own CPU allocator guarantees
constexpr size_t kHeader = kAlignment;  // holds the counted size and the block size

std::atomic<size_t> g_current{0};
std::atomic<size_t> g_peak{0};
std::atomic<size_t> g_budget{0};  // absolute, 0 = none
std::atomic<size_t> g_refused{0};  // size of the last allocation the budget refused

// Freed large blocks are kept for reuse, keyed by size: a training step or a batch of
// windows allocates the same sizes again and again, and returning them to the system
// makes every new one page-fault its way in (a quarter of the time on this machine).
constexpr size_t kCacheMinBlock = size_t(256) << 10;  // smaller ones come from malloc's bins
std::atomic<size_t> g_cache_limit{size_t(2) << 30};
std::mutex g_cache_mutex;
std::multimap<size_t, void*> g_cache;  // block size -> raw blocks
size_t g_cached = 0;

// The smallest cached block of at least `total` bytes and at most a third more (a smaller
// last batch reuses the full batches' blocks instead of caching its own); its size in
// *block_size.
void* takeCached(size_t total, size_t* block_size) {
  if (total < kCacheMinBlock) return nullptr;
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  auto it = g_cache.lower_bound(total);
  if (it == g_cache.end() || it->first > total + total / 3) return nullptr;
  void* raw = it->second;
  *block_size = it->first;
  g_cached -= it->first;
  g_cache.erase(it);
  return raw;
}

bool keepCached(void* raw, size_t total) {
  if (total < kCacheMinBlock) return false;
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  if (g_cached + total > g_cache_limit.load(std::memory_order_relaxed)) return false;
  g_cache.emplace(total, raw);
  g_cached += total;
  return true;
}

size_t blockTotal(size_t nbytes) {
  return ((nbytes + kHeader + kAlignment - 1) / kAlignment) * kAlignment;
}

void updatePeak(size_t now) {
  size_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

// Each block carries its size in a header in front of the data, so the raw deleter
// (used by oneDNN through raw_allocate/raw_deallocate) can account for it too.
class CountingCpuAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t nbytes) const override {
    const size_t now = g_current.fetch_add(nbytes, std::memory_order_relaxed) + nbytes;
    const size_t budget = g_budget.load(std::memory_order_relaxed);
    if (budget != 0 && now > budget) {
      g_current.fetch_sub(nbytes, std::memory_order_relaxed);
      g_refused.store(nbytes, std::memory_order_relaxed);
      std::ostringstream msg;
      msg << "out of memory: the CPU memory budget is exceeded: tried to allocate " << nbytes << " bytes with "
          << (now - nbytes) << " of " << budget << " already in use";
      TORCH_CHECK_WITH(OutOfMemoryError, false, msg.str());
    }
    updatePeak(now);
    size_t total = blockTotal(nbytes);
    void* raw = takeCached(total, &total);
    if (raw == nullptr && (posix_memalign(&raw, kAlignment, total) != 0 || raw == nullptr)) {
      g_current.fetch_sub(nbytes, std::memory_order_relaxed);
      TORCH_CHECK_WITH(OutOfMemoryError, false, "out of CPU memory allocating ", nbytes,
                       " bytes");
    }
    static_cast<size_t*>(raw)[0] = nbytes;  // counted
    static_cast<size_t*>(raw)[1] = total;   // the block's real size (may be larger)
    void* data = static_cast<char*>(raw) + kHeader;
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &release; }

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  // LibTorch 2.3 made this part of every allocator.
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
#endif

  static void release(void* data) {
    if (data == nullptr) return;
    void* raw = static_cast<char*>(data) - kHeader;
    const size_t nbytes = static_cast<size_t*>(raw)[0];
    g_current.fetch_sub(nbytes, std::memory_order_relaxed);
    if (!keepCached(raw, static_cast<size_t*>(raw)[1])) std::free(raw);
  }
};

CountingCpuAllocator g_allocator;

#ifdef GEODL_WITH_CUDA
// Index of the all-pools statistic (StatType::AGGREGATE), whose enum moved between
// LibTorch versions.
constexpr size_t kAggregate = 0;

int cudaIndex(const std::string& device) {
  const auto colon = device.find(':');
  return colon == std::string::npos ? 0 : std::stoi(device.substr(colon + 1));
}
#endif

}  // namespace

void releaseCachedCpuMemory() {
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  for (auto& [total, raw] : g_cache) std::free(raw);
  g_cache.clear();
  g_cached = 0;
}

size_t cachedCpuBytes() {
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  return g_cached;
}

void setCpuCacheLimit(size_t bytes) { g_cache_limit.store(bytes, std::memory_order_relaxed); }

void installCountingCpuAllocator() {
  static std::once_flag once;
  // Priority above LibTorch's default allocator (0), so ours stays in place.
  std::call_once(once, [] { c10::SetCPUAllocator(&g_allocator, /*priority=*/10); });
}

MemoryMeter::MemoryMeter(const std::string& device) {
  cuda_ = device.rfind("cuda", 0) == 0;
  if (cuda_) {
#ifndef GEODL_WITH_CUDA
    throw std::runtime_error("this build of the GeoDL engine has no CUDA support");
#else
    index_ = cudaIndex(device);
#endif
  } else {
    installCountingCpuAllocator();
  }
}

void MemoryMeter::start() {
#ifdef GEODL_WITH_CUDA
  if (cuda_) {
    namespace alloc = c10::cuda::CUDACachingAllocator;
    alloc::resetPeakStats(index_);
    baseline_ = alloc::getDeviceStats(index_).allocated_bytes[kAggregate].current;
    return;
  }
#endif
  baseline_ = g_current.load();
  g_peak.store(baseline_);
  g_refused.store(0);
}

size_t MemoryMeter::lastRefusedBytes() const { return cuda_ ? 0 : g_refused.load(); }

void MemoryMeter::resetPeak() {
#ifdef GEODL_WITH_CUDA
  if (cuda_) {
    c10::cuda::CUDACachingAllocator::resetPeakStats(index_);
    return;
  }
#endif
  g_peak.store(g_current.load());
}

namespace {

size_t aboveBaseline(size_t bytes, size_t baseline) { return bytes > baseline ? bytes - baseline : 0; }

}  // namespace

size_t MemoryMeter::current() const {
#ifdef GEODL_WITH_CUDA
  if (cuda_) {
    namespace alloc = c10::cuda::CUDACachingAllocator;
    return aboveBaseline(alloc::getDeviceStats(index_).allocated_bytes[kAggregate].current, baseline_);
  }
#endif
  return aboveBaseline(g_current.load(), baseline_);
}

size_t MemoryMeter::peak() const {
#ifdef GEODL_WITH_CUDA
  if (cuda_) {
    namespace alloc = c10::cuda::CUDACachingAllocator;
    return aboveBaseline(alloc::getDeviceStats(index_).allocated_bytes[kAggregate].peak, baseline_);
  }
#endif
  return aboveBaseline(g_peak.load(), baseline_);
}

void MemoryMeter::setBudget(size_t bytes) {
  if (cuda_) return;  // checked by the caller against peak()
  g_budget.store(bytes == 0 ? 0 : baseline_ + bytes);
}

}  // namespace geodl
