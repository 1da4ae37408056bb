#include <gtest/gtest.h>

#include <torch/torch.h>

#include "core/memory.h"

namespace geodl {
namespace {

TEST(MemoryMeter, CountsLibTorchCpuAllocationsExactly) {
  MemoryMeter meter("cpu");
  meter.start();
  EXPECT_EQ(meter.current(), 0u);
  {
    auto t = torch::empty({1000, 250}, torch::kFloat);  // 1,000,000 bytes
    EXPECT_EQ(meter.current(), 1000000u);
    auto u = torch::empty({100}, torch::kDouble);
    EXPECT_EQ(meter.current(), 1000800u);
  }
  EXPECT_EQ(meter.current(), 0u);
  EXPECT_EQ(meter.peak(), 1000800u);
  meter.resetPeak();
  EXPECT_EQ(meter.peak(), 0u);
}

TEST(MemoryMeter, BudgetFailsLikeAGpuOutOfMemory) {
  MemoryMeter meter("cpu");
  meter.start();
  meter.setBudget(4 << 20);
  auto small = torch::ones({1 << 18});  // 1 MiB fits
  bool threw = false;
  try {
    auto big = torch::ones({1 << 20});  // 4 MiB more does not
  } catch (const c10::OutOfMemoryError& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos);
  }
  EXPECT_TRUE(threw);
  meter.setBudget(0);
  auto big = torch::ones({1 << 20});  // no budget: fine
  EXPECT_EQ(big.numel(), 1 << 20);
}

TEST(MemoryMeter, OneDnnScratchMemoryIsCountedAndReleased) {
  MemoryMeter meter("cpu");
  meter.start();
  {
    auto x = torch::randn({4, 16, 64, 64});
    auto w = torch::randn({16, 16, 3, 3});
    auto y = torch::conv2d(x, w, {}, 1, 1);
    // More than the tensors themselves: the convolution's own scratch memory was counted.
    EXPECT_GT(meter.peak(), x.nbytes() + w.nbytes() + y.nbytes()) << "no scratch counted";
  }
  EXPECT_EQ(meter.current(), 0u);
}

}  // namespace
}  // namespace geodl

namespace geodl {
namespace {

TEST(MemoryCache, FreedLargeBlocksAreReusedAndReleased) {
  CpuMemoryScope scope(0.125);
  releaseCachedCpuMemory();
  void* first = nullptr;
  {
    auto t = torch::empty({1 << 20});  // 4 MiB
    first = t.data_ptr();
  }
  EXPECT_GE(cachedCpuBytes(), size_t(4) << 20);
  auto again = torch::zeros({1 << 20});
  EXPECT_EQ(again.data_ptr(), first);  // the same block, no fresh pages
  EXPECT_EQ(again.sum().item<float>(), 0.0f);
  again = torch::Tensor();
  // A somewhat smaller request takes the same block rather than a new one.
  auto smaller = torch::empty({(1 << 20) - (1 << 17)});
  EXPECT_EQ(smaller.data_ptr(), first);
  smaller = torch::Tensor();
  releaseCachedCpuMemory();
  EXPECT_EQ(cachedCpuBytes(), 0u);
  // Small blocks go straight back to malloc.
  { auto small = torch::empty({16}); }
  EXPECT_EQ(cachedCpuBytes(), 0u);
}

// The cache is sized to the job: blocks in use and cached together stay within the job's
// peak and its slack, so sizes that do not come back give their memory back.
TEST(MemoryCache, BlocksInUseAndCachedStayWithinTheJobsPeak) {
  constexpr int64_t kMiB = (1 << 20) / 4;  // floats
  CpuMemoryScope scope(0.125);
  {
    auto a = torch::empty({32 * kMiB});
    auto b = torch::empty({32 * kMiB});  // the job's peak: 64 MiB
  }
  EXPECT_GE(cachedCpuBytes(), size_t(64) << 20);
  {
    // 16 MiB fits neither cached block (twice its size): a fresh one, for which one of the
    // 32 MiB blocks goes, so that 16 + 64 stays within 64 MiB and an eighth.
    auto c = torch::empty({16 * kMiB});
    EXPECT_GE(cachedCpuBytes(), size_t(32) << 20);
    EXPECT_LT(cachedCpuBytes(), size_t(33) << 20);  // the 32 MiB block and its header
  }
  {
    // 64 MiB: a new peak, beside which nothing stays cached.
    auto d = torch::empty({64 * kMiB});
    EXPECT_EQ(cachedCpuBytes(), 0u);
  }
  // The next job starts from its own peak: what the last one cached is released.
  EXPECT_GE(cachedCpuBytes(), size_t(64) << 20);
  { CpuMemoryScope next(0.125); EXPECT_EQ(cachedCpuBytes(), 0u); }
}

}  // namespace
}  // namespace geodl
