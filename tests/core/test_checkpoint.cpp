// The generic checkpoint function (used by TernausNet and available to any block).
#include <gtest/gtest.h>

#include "core/checkpoint.h"
#include "core/test_support.h"

namespace geodl {
namespace {

namespace nn = torch::nn;
using torch::Tensor;

// conv - BatchNorm - ReLU - dropout, run plain or through checkpoint().
struct Block : nn::Module {
  Block() {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(3, 6, 3).padding(1)));
    bn = register_module("bn", nn::BatchNorm2d(6));
  }
  Tensor run(const Tensor& x) {
    return torch::dropout(torch::relu(bn->forward(conv->forward(x))), 0.25, is_training());
  }
  Tensor forward(const Tensor& x, bool checkpointed) {
    if (!checkpointed) return run(x);
    return checkpoint([this](const std::vector<Tensor>& in) { return run(in[0]); }, {x}, *this);
  }
  nn::Conv2d conv{nullptr};
  nn::BatchNorm2d bn{nullptr};
};

struct Result {
  Tensor loss, input_grad, weight_grad, running_mean;
  int64_t batches = 0;
};

Result step(bool checkpointed, bool input_grad, uint64_t seed) {
  torch::manual_seed(1);
  Block block;
  block.train();
  auto x = torch::randn({2, 3, 8, 8}).requires_grad_(input_grad);
  torch::manual_seed(seed);
  auto loss = block.forward(x, checkpointed).pow(2).sum();
  loss.backward();
  Result r{loss.detach(), input_grad ? x.grad().clone() : Tensor(),
           block.conv->weight.grad().clone(), block.bn->running_mean.clone(),
           block.bn->num_batches_tracked.item<int64_t>()};
  return r;
}

TEST(Checkpoint, GradientsEqualThePlainComputation) {
  const auto plain = step(false, true, 9);
  const auto ck = step(true, true, 9);
  EXPECT_LT(test::relativeError(ck.loss, plain.loss), 1e-6);
  EXPECT_LT(test::relativeError(ck.input_grad, plain.input_grad), 1e-5);
  EXPECT_LT(test::relativeError(ck.weight_grad, plain.weight_grad), 1e-5);
}

TEST(Checkpoint, DropoutReplaysAndOtherSeedsDiffer) {
  const auto a = step(true, true, 9);
  const auto b = step(true, true, 10);
  EXPECT_GT(test::relativeError(a.weight_grad, b.weight_grad), 1e-3);
}

TEST(Checkpoint, BuffersChangeOncePerStep) {
  const auto plain = step(false, true, 9);
  const auto ck = step(true, true, 9);
  EXPECT_TRUE(torch::allclose(ck.running_mean, plain.running_mean));
  EXPECT_EQ(ck.batches, 1);
}

TEST(Checkpoint, ParametersGetGradientsWhenTheInputNeedsNone) {
  const auto plain = step(false, false, 9);
  const auto ck = step(true, false, 9);
  ASSERT_TRUE(ck.weight_grad.defined());
  EXPECT_LT(test::relativeError(ck.weight_grad, plain.weight_grad), 1e-5);
}

}  // namespace
}  // namespace geodl
