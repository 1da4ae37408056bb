#include <gtest/gtest.h>

#include "core/reference_missing.h"

#include <fstream>

#include "base/errors.h"
#include "core/device.h"
#include "core/models.h"
#include "core/ternausnet.h"
#include "core/test_support.h"

namespace geodl {
namespace {

SegmentationModel ternaus(int bands, bool checkpoint, const std::string& pretrained = "") {
  ModelSpec s = modelSpecFromName("ternausnet");
  s.bands = bands;
  s.classes = 3;
  s.checkpoint = checkpoint;
  s.pretrained = pretrained;
  return makeModel(s);
}

// The plain model's and the checkpointed one's gradients on the same batch (same weights),
// and the plain model's in fp32 too.
struct CheckpointedAndPlain {
  test::StepGrads plain, checkpointed, plain_fp32;
};
CheckpointedAndPlain checkpointedAndPlain(bool bf16) {
  torch::manual_seed(2);
  auto plain = ternaus(3, false);
  auto ck = ternaus(3, true);
  test::copyState(*plain, *ck);
  auto x = torch::randn({2, 3, 32, 32});
  auto y = torch::randint(0, 3, {2, 32, 32});
  CheckpointedAndPlain r;
  r.plain = test::forwardBackward(*plain, x, y, true, bf16);
  r.checkpointed = test::forwardBackward(*ck, x, y, true, bf16);
  if (bf16) r.plain_fp32 = test::forwardBackward(*plain, x, y, true);
  return r;
}

TEST(TernausNet, CheckpointedGradientsEqualThePlainModel) {
  const auto r = checkpointedAndPlain(false);
  test::expectSameGradients(r.checkpointed, r.plain, 1e-5);
}

TEST(TernausNet, CheckpointedBf16AutocastGradientsEqualThePlainModels) {
  if (cpuBf16Instructions().empty())
    GTEST_SKIP() << "this CPU has neither AVX512_BF16 nor AMX-BF16: LibTorch's CPU bfloat16 convolutions need them";
  const auto r = checkpointedAndPlain(true);
  test::expectSameGradients(r.checkpointed, r.plain, 1e-5);
  EXPECT_GT(test::relativeError(r.plain.grads[0].second, r.plain_fp32.grads[0].second), 1e-5);
}

// Inference on the CPU takes the lean path (ReLUs in place, skips let go early): the same
// logits as the plain ops (eval mode with autograd on), on square and oblong windows.
TEST(TernausNet, LeanInferenceEqualsThePlainOps) {
  torch::manual_seed(4);
  auto model = ternaus(4, false);
  model->eval();
  for (auto size : {std::pair<int64_t, int64_t>{64, 64}, {32, 96}}) {
    const auto x = torch::randn({2, 4, size.first, size.second});
    const torch::Tensor plain = model->forward(x).detach();  // autograd on: the plain ops
    torch::Tensor fast;
    {
      torch::NoGradGuard no_grad;
      fast = model->forward(x);
    }
    EXPECT_TRUE(fast.is_contiguous());
    EXPECT_EQ(fast.sizes(), plain.sizes());
    EXPECT_LT(test::relativeError(fast, plain), 1e-5);
  }
}

TEST(TernausNet, TransposedConvolutionAsConvolutionEqualsLibTorchs) {
  torch::manual_seed(4);
  torch::nn::ConvTranspose2d t(
      torch::nn::ConvTranspose2dOptions(6, 5, 3).stride(2).padding(1).output_padding(1));
  auto x = torch::randn({2, 6, 7, 9}, torch::requires_grad());
  auto reference = t->forward(x);
  auto ours = transposedConvAsConv(x, *t);
  ASSERT_EQ(ours.sizes(), reference.sizes());
  EXPECT_LT(test::relativeError(ours, reference), 1e-6);
  auto g = torch::randn_like(reference);
  auto grads_ref = torch::autograd::grad({reference}, {x, t->weight, t->bias}, {g});
  auto grads_ours = torch::autograd::grad({ours}, {x, t->weight, t->bias}, {g});
  for (size_t i = 0; i < 3; ++i) EXPECT_LT(test::relativeError(grads_ours[i], grads_ref[i]), 1e-5) << i;
}

TEST(TernausNet, PretrainedEncoderLoadsFromATorchSaveFile) {
  const std::string path = test::tempPath("vgg11.pt");
  if (!test::pythonTorchAvailable())
    GEODL_REFERENCE_MISSING("Debian's python3-torch is not installed (scripts/install-deps.sh installs it)");
  ASSERT_TRUE(test::runPythonReference("vgg11_features.py", path));
  auto source = test::loadPickledDict(path);
  auto model = ternaus(3, false, path);
  auto* net = dynamic_cast<TernausNetImpl*>(model.get());
  ASSERT_NE(net, nullptr);
  for (int index : {0, 3, 6, 8, 11, 13, 16, 18}) {
    auto* conv = net->encoder->ptr(index)->as<torch::nn::Conv2dImpl>();
    EXPECT_TRUE(torch::equal(conv->weight, source.at(std::to_string(index) + ".weight").toTensor()));
    EXPECT_TRUE(torch::equal(conv->bias, source.at(std::to_string(index) + ".bias").toTensor()));
  }
  // Four bands: RGB filters first, their mean for the fourth band.
  auto four = ternaus(4, false, path);
  auto w = dynamic_cast<TernausNetImpl*>(four.get())->encoder->ptr(0)->as<torch::nn::Conv2dImpl>()->weight;
  auto rgb = source.at("0.weight").toTensor();
  EXPECT_TRUE(torch::equal(w.narrow(1, 0, 3), rgb));
  EXPECT_TRUE(torch::allclose(w.narrow(1, 3, 1), rgb.mean(1, true)));
  std::remove(path.c_str());
}

TEST(TernausNet, MissingOrForeignPretrainedFilesGiveClearErrors) {
  try {
    ternaus(3, false, "/nonexistent/vgg.pt");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read the pretrained encoder file"),
              std::string::npos);
  }
  const std::string path = test::tempPath("not_a_model.pt");
  { std::ofstream(path) << "hello"; }
  EXPECT_THROW(ternaus(3, false, path), InputError);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace geodl
