// The checkpointed UNet blocks against the plain model: same maths, less memory.
#include <gtest/gtest.h>

#include "core/batch_probe.h"
#include "core/device.h"
#include "core/memory.h"
#include "core/models.h"
#include "core/test_support.h"
#include "core/train_step.h"
#include "core/unet.h"

namespace geodl {
namespace {

// The same weights three ways: plain autograd (every intermediate kept: the reference),
// checkpointed (each block recomputed in backward), and the default training path without
// checkpointing (each unit's conv output kept, what follows the convolutions recomputed).
struct Pair {
  SegmentationModel plain, checkpointed, kept;
  std::vector<std::pair<const char*, SegmentationModel>> lean() const {
    return {{"checkpointed", checkpointed}, {"conv outputs kept", kept}};
  }
};

Pair makePair(const std::string& name, int bands, int classes, bool dropout = false) {
  ModelSpec s = test::specNamed(name, bands, classes);
  s.dropout = dropout;
  s.dropout_probability = 0.3;
  torch::manual_seed(11);
  Pair p{makeModel(s), makeModel(s), makeModel(s)};
  test::copyState(*p.plain, *p.checkpointed);
  test::copyState(*p.plain, *p.kept);
  std::dynamic_pointer_cast<UNetImpl>(p.plain)->options.recompute_activations(false);
  p.plain->setCheckpointing(false);
  p.checkpointed->setCheckpointing(true);
  p.kept->setCheckpointing(false);
  for (const auto& m : {p.plain, p.checkpointed, p.kept}) m->train();
  return p;
}

struct Case {
  std::string model;
  int height, width;
};

class UNetCheckpoint : public ::testing::TestWithParam<Case> {};

TEST_P(UNetCheckpoint, GradientsOfEveryParameterAndTheInputEqualThePlainModel) {
  const auto c = GetParam();
  auto p = makePair(c.model, 3, 4);
  torch::manual_seed(5);
  auto x = torch::randn({2, 3, c.height, c.width});
  auto y = torch::randint(0, 4, {2, c.height, c.width});
  auto plain = test::forwardBackward(*p.plain, x, y, true);
  for (const auto& [how, model] : p.lean()) {
    SCOPED_TRACE(how);
    test::expectSameGradients(test::forwardBackward(*model, x, y, true), plain, 1e-5);
  }
  // And the comparison can fail: another batch gives other gradients.
  auto other = test::forwardBackward(*p.plain, x * 0.5, y, true);
  EXPECT_GT(test::relativeError(other.grads[0].second, plain.grads[0].second), 1e-3);
}

// 32x32: every level halves exactly; 30x42: maxpool floors, skips and output are resized.
INSTANTIATE_TEST_SUITE_P(Sizes, UNetCheckpoint,
                         ::testing::Values(Case{"unetsmall", 32, 32}, Case{"unetsmall", 30, 42},
                                           Case{"unet", 32, 48}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.model + "_" + std::to_string(info.param.height) +
                                  "x" + std::to_string(info.param.width);
                         });

// bfloat16 autocast (training with precision bf16): the recompute in backward runs after
// the autocast region has closed, yet casts as the forward did, and the hand-written backward
// follows autograd's through the casts. Runs on any CPU (without AVX512_BF16 oneDNN emulates).
TEST(UNetCheckpoint, Bf16AutocastGradientsEqualThePlainModelsUnderAutocast) {
  if (cpuBf16Instructions().empty())
    GTEST_SKIP() << "this CPU has neither AVX512_BF16 nor AMX-BF16: LibTorch's CPU bfloat16 convolutions need them";
  for (const Case& c : {Case{"unetsmall", 30, 42}, Case{"unet", 32, 32}}) {
    SCOPED_TRACE(c.model);
    auto p = makePair(c.model, 3, 4);
    torch::manual_seed(5);
    auto x = torch::randn({2, 3, c.height, c.width});
    auto y = torch::randint(0, 4, {2, c.height, c.width});
    auto plain = test::forwardBackward(*p.plain, x, y, true, /*bf16=*/true);
    for (const auto& [how, model] : p.lean()) {
      SCOPED_TRACE(how);
      auto ck = test::forwardBackward(*model, x, y, true, /*bf16=*/true);
      for (const auto& g : ck.grads) EXPECT_EQ(g.second.scalar_type(), torch::kFloat) << g.first;
      EXPECT_EQ(ck.input_grad.scalar_type(), torch::kFloat);
      test::expectSameGradients(ck, plain, 1e-5);
    }
    // bfloat16 it is: the loss is near fp32's, not equal to it.
    auto fp32 = test::forwardBackward(*p.plain, x, y, true);
    const double error = test::relativeError(plain.loss, fp32.loss);
    EXPECT_GT(error, 1e-6);
    EXPECT_LT(error, 0.01);
  }
}

TEST(UNetCheckpoint, DropoutDrawsTheSameMaskWhenRecomputed) {
  auto p = makePair("unetsmall", 3, 4, /*dropout=*/true);
  auto x = torch::randn({2, 3, 32, 32});
  auto y = torch::randint(0, 4, {2, 32, 32});
  torch::manual_seed(21);
  auto plain = test::forwardBackward(*p.plain, x, y, true);
  torch::manual_seed(21);
  test::forwardBackward(*p.plain, x, y, true);
  const auto after_plain = torch::rand({4});
  for (const auto& [how, model] : p.lean()) {
    SCOPED_TRACE(how);
    torch::manual_seed(21);
    auto ck = test::forwardBackward(*model, x, y, true);
    // Masks replayed in backward: gradients equal the plain model's with the same draws.
    test::expectSameGradients(ck, plain, 1e-5);
    // The recompute left the generator where the forward pass left it.
    torch::manual_seed(21);
    test::forwardBackward(*model, x, y, true);
    EXPECT_TRUE(torch::equal(torch::rand({4}), after_plain));
  }
  // Other draws give other gradients: the masks matter.
  torch::manual_seed(22);
  auto other = test::forwardBackward(*p.checkpointed, x, y, true);
  EXPECT_GT(test::relativeError(other.grads[0].second, plain.grads[0].second), 1e-3);
}

TEST(UNetCheckpoint, BatchNormRunningStatisticsAreUpdatedOncePerStep) {
  auto p = makePair("unetsmall", 3, 4);
  auto x = torch::randn({2, 3, 32, 32}) * 2 + 1;
  auto y = torch::randint(0, 4, {2, 32, 32});
  test::forwardBackward(*p.plain, x, y, true);
  auto plain_buffers = p.plain->named_buffers();
  for (const auto& [how, model] : p.lean()) {
    SCOPED_TRACE(how);
    test::forwardBackward(*model, x, y, true);
    int checked = 0;
    for (const auto& b : model->named_buffers()) {
      EXPECT_TRUE(torch::allclose(b.value(), plain_buffers[b.key()], 1e-6, 1e-7)) << b.key();
      if (b.key().find("num_batches_tracked") != std::string::npos) {
        EXPECT_EQ(b.value().item<int64_t>(), 1) << b.key();
        ++checked;
      }
    }
    EXPECT_EQ(checked, 8);  // four blocks with BatchNorm, two units each
  }
}

TEST(UNetCheckpoint, FirstBlockGetsGradientsWhenTheInputNeedsNone) {
  auto p = makePair("unetsmall", 3, 4);
  auto x = torch::randn({2, 3, 32, 32});
  auto y = torch::randint(0, 4, {2, 32, 32});
  auto plain = test::forwardBackward(*p.plain, x, y, false);
  for (const auto& [how, model] : p.lean()) {
    SCOPED_TRACE(how);
    auto ck = test::forwardBackward(*model, x, y, false);
    ASSERT_EQ(ck.grads.front().first, "conv1.EncodingBlock.1.weight");
    ASSERT_TRUE(ck.grads.front().second.defined());
    EXPECT_GT(ck.grads.front().second.abs().sum().item<double>(), 0.0);
    test::expectSameGradients(ck, plain, 1e-5);
  }
}

TEST(UNetCheckpoint, EvalAndNoGradForwardsAreThePlainOnes) {
  auto p = makePair("unetsmall", 3, 4);
  auto x = torch::randn({1, 3, 32, 32});
  p.plain->eval();
  p.checkpointed->eval();
  p.kept->eval();
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::equal(p.plain->forward(x), p.checkpointed->forward(x)));
  EXPECT_TRUE(torch::equal(p.plain->forward(x), p.kept->forward(x)));
}

// Inference without autograd takes the fused path (PReLU, BatchNorm and padding in one
// pass): it must compute what the layer-by-layer autograd forward computes.
TEST(UNetInference, FusedForwardEqualsTheLayerByLayerForward) {
  for (const Case& c : {Case{"unetsmall", 64, 64}, Case{"unetsmall", 45, 37}, Case{"unet", 36, 52}}) {
    SCOPED_TRACE(c.model + " " + std::to_string(c.height) + "x" + std::to_string(c.width));
    ModelSpec s = modelSpecFromName(c.model);
    s.bands = 3;
    s.classes = 5;
    torch::manual_seed(5);
    SegmentationModel model = makeModel(s);
    // Statistics and slopes away from their initial values, so that every term counts.
    {
      torch::NoGradGuard no_grad;
      for (auto& buffer : model->named_buffers()) {
        if (buffer.key().find("running_mean") != std::string::npos) buffer.value().uniform_(-0.5, 0.5);
        if (buffer.key().find("running_var") != std::string::npos) buffer.value().uniform_(0.5, 2.0);
      }
      for (auto& param : model->named_parameters())
        if (param.key().find(".weight") != std::string::npos && param.value().dim() == 1)
          param.value().uniform_(-0.3, 1.5);
    }
    model->eval();
    auto x = torch::randn({2, 3, c.height, c.width});
    const auto reference = model->forward(x).detach();  // autograd on: the plain layers
    torch::NoGradGuard no_grad;
    const auto fused = model->forward(x);
    ASSERT_EQ(fused.sizes(), reference.sizes());
    EXPECT_LT((fused - reference).abs().max().item<double>(), 1e-4 * reference.abs().max().item<double>());
    EXPECT_GT(reference.abs().max().item<double>(), 0.0);
  }
}

TEST(UNetCheckpoint, MemoryOfATrainingStepFallsFromPlainToConvOutputsKeptToCheckpointed) {
  // The benchmark measures the real figures at 256x256; here a small, fast guard: the
  // peak of one forward and backward pass, the weights' gradients included.
  installCountingCpuAllocator();
  auto p = makePair("unetsmall", 3, 4);
  auto x = torch::randn({4, 3, 96, 96});
  auto y = torch::randint(0, 4, {4, 96, 96});
  MemoryMeter meter("cpu");
  const auto peak = [&](const SegmentationModel& model) {
    meter.start();
    test::forwardBackward(*model, x, y, false);
    return double(meter.peak());
  };
  const double plain = peak(p.plain), kept = peak(p.kept), checkpointed = peak(p.checkpointed);
  EXPECT_LT(kept / plain, 0.65) << kept << " against plain autograd's " << plain;
  EXPECT_LT(checkpointed / kept, 0.85) << checkpointed << " against " << kept;
  // And the batch probe sees the default path's memory: checkpointing fits a larger batch.
  BatchProbeOptions o;
  o.model = "unetsmall";
  o.sample_size = 64;
  o.budget_mib = 1024;
  o.confirm = false;
  o.device = "cpu";
  NullProgress progress;
  const auto fast = probeMaxBatch(o, progress);
  o.checkpoint = true;
  const auto lean = probeMaxBatch(o, progress);
  EXPECT_GT(fast.bytes_per_sample / lean.bytes_per_sample, 1.3)
      << fast.bytes_per_sample << " against " << lean.bytes_per_sample;
  EXPECT_GT(lean.max_batch, fast.max_batch);
}

}  // namespace
}  // namespace geodl
