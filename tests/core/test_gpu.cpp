// The checkpointing and memory checks on CUDA. Skipped, with a message, without a GPU.
#include <gtest/gtest.h>

#include "core/batch_probe.h"
#include "core/device.h"
#include "core/models.h"
#include "core/test_support.h"

namespace geodl {
namespace {

TEST(Gpu, CheckpointedUNetGradientsEqualThePlainModelOnCuda) {
  if (!cudaAvailable()) GTEST_SKIP() << "no CUDA GPU in this build or machine";
  for (const std::string name : {"unetsmall", "unet"}) {
    const ModelSpec s = test::specNamed(name, 3, 4);
    torch::manual_seed(3);
    auto plain = makeModel(s);
    auto ck = makeModel(s);
    test::copyState(*plain, *ck);
    ck->setCheckpointing(true);
    plain->to(torch::kCUDA);
    ck->to(torch::kCUDA);
    auto x = torch::randn({2, 3, 64, 64}, torch::kCUDA);
    auto y = torch::randint(0, 4, {2, 64, 64}, torch::TensorOptions(torch::kCUDA).dtype(torch::kLong));
    auto a = test::forwardBackward(*plain, x, y, true);
    auto b = test::forwardBackward(*ck, x, y, true);
    // cuDNN picks algorithms per call: allow for their different summation orders.
    test::expectSameGradients(b, a, 1e-4);
  }
}

TEST(Gpu, ProbeUsesTheCachingAllocatorStatistics) {
  if (!cudaAvailable()) GTEST_SKIP() << "no CUDA GPU in this build or machine";
  BatchProbeOptions o;
  o.model = "unetsmall";
  o.sample_size = 64;
  o.budget_mib = 512;
  o.device = "cuda";
  NullProgress progress;
  const auto plain = probeMaxBatch(o, progress);
  o.checkpoint = true;
  const auto ck = probeMaxBatch(o, progress);
  EXPECT_TRUE(plain.confirmed);
  EXPECT_TRUE(ck.confirmed);
  EXPECT_GT(ck.max_batch, 2 * plain.max_batch);
}

}  // namespace
}  // namespace geodl
