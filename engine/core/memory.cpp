#include "core/memory.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>

#include "core/torch_compat.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/mman.h>
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
constexpr size_t kCacheLimit = size_t(2) << 30;  // at most, whatever the job's peak
std::mutex g_cache_mutex;
std::multimap<size_t, void*> g_cache;  // block size -> raw blocks
size_t g_cached = 0;
// The most bytes LibTorch has held at once since the cache was last released (the job's
// own peak): the cache is sized to it, see takeCached.
std::atomic<size_t> g_high_water{0};
std::atomic<size_t> g_live_blocks{0};  // the sizes of the large blocks in use
std::atomic<double> g_cache_slack{0.125};  // the job's footprint beyond its high water

// Large blocks are mapped from the system directly rather than through malloc: glibc raises
// its mmap threshold each time a mapped block is freed (up to 32 MiB), after which blocks of
// that size come from its heap, where freeing them rarely returns memory (some 250 MiB of a
// training run's resident set). Unmapping returns the memory when the cache lets a block go.
// (Transparent huge pages were tried: training ran slower in more memory.)
void* mapBlock(size_t total) {
  void* raw = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return raw == MAP_FAILED ? nullptr : raw;
}

void freeBlock(void* raw, size_t total) {
  if (total >= kCacheMinBlock) {
    munmap(raw, total);
  } else {
    std::free(raw);
  }
}

// The smallest cached block of at least `total` bytes that may serve it (caller holds the
// lock): at most a third larger, so that a smaller last batch reuses the full batches'
// blocks without small requests tying up large ones; or any larger one when `any_size`.
std::multimap<size_t, void*>::iterator fittingBlock(size_t total, bool any_size) {
  auto it = g_cache.lower_bound(total);
  if (it == g_cache.end() || (!any_size && it->first > total + total / 3)) return g_cache.end();
  return it;
}

void* takeBlock(std::multimap<size_t, void*>::iterator it, size_t* block_size) {
  void* raw = it->second;
  *block_size = it->first;
  g_cached -= it->first;
  g_cache.erase(it);
  return raw;
}

// A cached block for `total` bytes, or nullptr when a fresh one is to be allocated; the
// block's size in *total. The cache is sized to the job: the large blocks in use and cached
// together stay within the job's high water (its own peak) and a slack set by the job, so
// the cache never holds much more than the job uses at its peak. When a fresh block would
// go beyond that, cached blocks are freed: the smallest that covers the excess first, else
// the largest. A step's freed activations are then reused by the next
// step, and sizes that do not come back (a smaller last batch, validation's shapes) give
// their memory back instead of piling up beside the peak.
void* takeCached(size_t* total) {
  if (*total < kCacheMinBlock) return nullptr;
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  auto it = fittingBlock(*total, false);
  if (it != g_cache.end()) return takeBlock(it, total);
  const size_t high_water = g_high_water.load(std::memory_order_relaxed);
  const size_t limit =
      high_water + size_t(double(high_water) * g_cache_slack.load(std::memory_order_relaxed));
  const size_t live = g_live_blocks.load(std::memory_order_relaxed);
  if (live + *total + g_cached <= limit) return nullptr;
  while (!g_cache.empty() && live + *total + g_cached > limit) {
    it = g_cache.lower_bound(live + *total + g_cached - limit);
    if (it == g_cache.end()) it = std::prev(g_cache.end());
    size_t size = 0;
    void* raw = takeBlock(it, &size);
    freeBlock(raw, size);
  }
  return nullptr;
}

bool keepCached(void* raw, size_t total) {
  if (total < kCacheMinBlock) return false;
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  if (g_cached + total > kCacheLimit) return false;
  g_cache.emplace(total, raw);
  g_cached += total;
  return true;
}

size_t blockTotal(size_t nbytes) {
  return ((nbytes + kHeader + kAlignment - 1) / kAlignment) * kAlignment;
}

void raiseTo(std::atomic<size_t>& peak_value, size_t now) {
  size_t peak = peak_value.load(std::memory_order_relaxed);
  while (now > peak && !peak_value.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

void updatePeak(size_t now) {
  raiseTo(g_peak, now);
  raiseTo(g_high_water, now);
}

// Each block carries its size in a header in front of the data, so the raw deleter
// (used by oneDNN through raw_allocate/raw_deallocate) can account for it too.
class CountingCpuAllocator final : public c10::Allocator {
 public:
  c10::DataPtr allocate(size_t nbytes) GEODL_ALLOCATE_CONST override {
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
    void* raw = takeCached(&total);
    if (raw == nullptr && total >= kCacheMinBlock) {
      raw = mapBlock(total);
    } else if (raw == nullptr && posix_memalign(&raw, kAlignment, total) != 0) {
      raw = nullptr;
    }
    if (raw == nullptr) {
      g_current.fetch_sub(nbytes, std::memory_order_relaxed);
      TORCH_CHECK_WITH(OutOfMemoryError, false, "out of CPU memory allocating ", nbytes,
                       " bytes");
    }
    if (total >= kCacheMinBlock) g_live_blocks.fetch_add(total, std::memory_order_relaxed);
    static_cast<size_t*>(raw)[0] = nbytes;  // counted
    static_cast<size_t*>(raw)[1] = total;   // the block's real size (may be larger)
    void* data = static_cast<char*>(raw) + kHeader;
    return {data, data, &release, c10::Device(c10::DeviceType::CPU)};
  }

  c10::DeleterFnPtr raw_deleter() const override { return &release; }

  GEODL_ALLOCATOR_COPY_DATA

  static void release(void* data) {
    if (data == nullptr) return;
    void* raw = static_cast<char*>(data) - kHeader;
    const size_t nbytes = static_cast<size_t*>(raw)[0];
    g_current.fetch_sub(nbytes, std::memory_order_relaxed);
    const size_t total = static_cast<size_t*>(raw)[1];
    if (total >= kCacheMinBlock) g_live_blocks.fetch_sub(total, std::memory_order_relaxed);
    if (!keepCached(raw, total)) freeBlock(raw, total);
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
  for (auto& [total, raw] : g_cache) freeBlock(raw, total);
  g_cache.clear();
  g_cached = 0;
  g_high_water.store(g_current.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void releaseCachedMemory(const std::string& device) {
#ifdef GEODL_WITH_CUDA
  if (device.rfind("cuda", 0) == 0) {
    c10::cuda::CUDACachingAllocator::emptyCache();
    return;
  }
#endif
  releaseCachedCpuMemory();
}

size_t cachedCpuBytes() {
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  return g_cached;
}

void setCpuCacheSlack(double fraction) { g_cache_slack.store(fraction, std::memory_order_relaxed); }

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
