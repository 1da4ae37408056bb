// Memory accounting: LibTorch's CPU allocations through a counting allocator (which can
// also enforce a budget, failing the way a GPU out-of-memory does), CUDA through the
// caching allocator's statistics.
#pragma once

#include <cstddef>
#include <string>

namespace geodl {

// Peak and current bytes allocated by LibTorch on one device ("cpu", "cuda", "cuda:N").
class MemoryMeter {
 public:
  explicit MemoryMeter(const std::string& device);
  // Starts a measurement: bytes already allocated become the baseline.
  void start();
  // Restarts the peak from what is allocated now, keeping the baseline.
  void resetPeak();
  size_t current() const;  // above the baseline
  size_t peak() const;     // highest current() since start()
  // Allocations that would take current() beyond `bytes` fail with an out-of-memory
  // error (CPU: enforced by the allocator; CUDA: the peak is checked after the fact by
  // the caller). 0 removes the budget.
  void setBudget(size_t bytes);
  bool isCuda() const { return cuda_; }
  // Size of the last allocation the CPU budget refused (0 if none since start()).
  size_t lastRefusedBytes() const;

 private:
  bool cuda_ = false;
  int index_ = 0;
  size_t baseline_ = 0;
};

// Installs the counting CPU allocator into LibTorch (once per process; idempotent).
void installCountingCpuAllocator();

// The allocator keeps freed blocks of 256 KiB and more for reuse: repeated steps then reuse
// memory instead of faulting fresh pages in. The cache is sized to the job: the blocks in
// use and cached together stay within the most the job has used at once (its high water,
// since the cache was last released) plus `fraction` of it (at most 2 GiB cached). The
// cache keeps one block per size, so a job whose sizes vary within a step (classification)
// needs more slack than one whose steps repeat (training) to reuse instead of re-faulting.
// Jobs release the cache when they end (QGIS must get its memory back).
void releaseCachedCpuMemory();
size_t cachedCpuBytes();
// Gives back what the allocator of `device` caches: the CPU's (as above) or the GPU's
// (LibTorch's caching allocator), after an out-of-memory error, before trying again.
void releaseCachedMemory(const std::string& device);
void setCpuCacheSlack(double fraction);

// Installs the allocator for a job's lifetime with the cache's slack (see setCpuCacheSlack)
// and releases its cache at the end.
// The slack of a training job's cache: its steps repeat their sizes (geodl train and the
// training benchmarks use it).
constexpr double kTrainingCacheSlack = 0.03;

class CpuMemoryScope {
 public:
  explicit CpuMemoryScope(double cache_slack) {
    installCountingCpuAllocator();
    releaseCachedCpuMemory();
    setCpuCacheSlack(cache_slack);
  }
  ~CpuMemoryScope() { releaseCachedCpuMemory(); }
  CpuMemoryScope(const CpuMemoryScope&) = delete;
  CpuMemoryScope& operator=(const CpuMemoryScope&) = delete;
};

}  // namespace geodl
