// UNet++ and the DeepLabs: the same logits as their references from the same weights
// (torchvision's deeplabv3_resnet50 itself; smp's Unet (resnet34, also the GPU check's
// PyTorch reference), UnetPlusPlus and DeepLabV3Plus written out
// from smp's definitions in tests/reference/segmentation_models.py), the logits at the
// input's size whatever it is, checkpointed gradients against the plain model's, and the
// fused inference path against the plain ops.
#include <gtest/gtest.h>

#include "core/reference_missing.h"

#include <set>

#include "core/deeplab.h"
#include "core/models.h"
#include "core/test_support.h"

namespace geodl {
namespace {

struct ReferenceCase {
  std::string name;
  int64_t height, width;  // what the reference takes: any for torchvision, multiples for smp
};

class SegmentationReference : public ::testing::TestWithParam<ReferenceCase> {};

TEST_P(SegmentationReference, SameLogitsFromTheSameWeights) {
  const auto& c = GetParam();
  if (!test::pythonTorchAvailable())
    GEODL_REFERENCE_MISSING("Debian's python3-torch is not installed (scripts/install-deps.sh installs it)");
  const std::string path = test::tempPath(c.name + ".pt");
  // 4 bands (the first convolution rebuilt), 5 classes.
  ASSERT_TRUE(test::runPythonReference("segmentation_models.py", c.name + " 4 5 " + std::to_string(c.height) + " " +
                                                                   std::to_string(c.width) + " " + path));
  auto ref = test::loadPickledDict(path);
  std::remove(path.c_str());
  auto model = test::modelNamed(c.name, 4, 5);
  test::loadStateDict(*model, ref.at("state").toGenericDict());
  int64_t count = 0;
  for (const auto& p : model->parameters()) count += p.numel();
  EXPECT_EQ(count, ref.at("parameters").toTensor().item<int64_t>());
  model->eval();
  const auto x = ref.at("input").toTensor();
  const auto expected = ref.at("logits").toTensor();
  const torch::Tensor plain = model->forward(x).detach();  // autograd on: the plain ops
  torch::Tensor fused;
  {
    torch::NoGradGuard no_grad;  // BatchNorm folded, channels last
    fused = model->forward(x);
  }
  ASSERT_EQ(plain.sizes(), expected.sizes());
  EXPECT_LT(test::relativeError(plain, expected), 1e-4);
  EXPECT_LT(test::relativeError(fused, expected), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Models, SegmentationReference,
                         ::testing::Values(ReferenceCase{"deeplabv3_resnet50", 72, 56},
                                           ReferenceCase{"resnet34_unet", 64, 96},
                                           ReferenceCase{"resnet34_unetplusplus", 64, 96},
                                           ReferenceCase{"deeplabv3plus_resnet50", 48, 80}),
                         [](const auto& info) { return info.param.name; });

// smp's UnetPlusPlus("resnet34") with one class has 26,078,609 parameters.
TEST(UNetPlusPlus, ParameterCountIsSmps) {
  ModelSpec s = modelSpecFromName("resnet34_unetplusplus");
  s.bands = 3;
  s.classes = 1;
  EXPECT_EQ(parameterCount(s), 26078609);
}

TEST(UNetPlusPlus, NestedBlocksWithSmpsNamesAndWidths) {
  auto model = test::modelNamed("resnet34_unetplusplus", 3, 2);
  const auto params = model->named_parameters();
  // x_0_0: layer4 (512) up, layer3 (256); x_1_3: x_1_2 (64) up, x_2_3 and x_3_3 and the
  // stem (3 x 64); x_0_3: x_0_2 (64), x_1_3 x_2_3 x_3_3 and the stem (4 x 64) to 32;
  // x_0_4: 32 to 16 without skip.
  EXPECT_EQ(params["decoder.blocks.x_0_0.conv1.0.weight"].sizes(), (std::vector<int64_t>{256, 768, 3, 3}));
  EXPECT_EQ(params["decoder.blocks.x_1_3.conv1.0.weight"].sizes(), (std::vector<int64_t>{64, 64 + 192, 3, 3}));
  EXPECT_EQ(params["decoder.blocks.x_0_3.conv1.0.weight"].sizes(), (std::vector<int64_t>{32, 64 + 256, 3, 3}));
  EXPECT_EQ(params["decoder.blocks.x_0_4.conv1.0.weight"].sizes(), (std::vector<int64_t>{16, 32, 3, 3}));
  std::set<std::string> blocks;
  for (const auto& p : params)
    if (p.key().rfind("decoder.blocks.", 0) == 0) blocks.insert(p.key().substr(15, 5));
  EXPECT_EQ(blocks.size(), 11u);  // 4 + 3 + 2 + 1 nested nodes and x_0_4
}

// Every model on a ResNet: sides that are multiples of what it needs, other sides
// (reflection), and sides at most half their padding (the edge repeated).
TEST(SegmentationModels, LogitsAtTheInputSize) {
  torch::manual_seed(0);
  for (const std::string name : {"resnet18_unet", "resnet50_unet", "resnet34_unetplusplus", "deeplabv3_resnet50",
                                 "deeplabv3plus_resnet50"}) {
    SCOPED_TRACE(name);
    auto model = test::modelNamed(name, 5, 3);
    model->eval();
    torch::NoGradGuard no_grad;
    for (auto hw : {std::pair<int64_t, int64_t>{64, 96}, {50, 70}, {12, 40}}) {
      const auto out = model->forward(torch::randn({2, 5, hw.first, hw.second}));
      EXPECT_EQ(out.sizes(), (std::vector<int64_t>{2, 3, hw.first, hw.second}));
      EXPECT_TRUE(out.is_contiguous());
      EXPECT_TRUE(torch::isfinite(out).all().item<bool>());
    }
  }
}

// Each encoder stage and decoder block (the ASPP, the refinement) recomputed in backward:
// the same gradients as the plain model's, on the same weights, batch and dropout draws.
TEST(SegmentationModels, CheckpointedGradientsEqualThePlainModel) {
  for (const std::string name : {"resnet34_unetplusplus", "deeplabv3_resnet50", "deeplabv3plus_resnet50"}) {
    SCOPED_TRACE(name);
    torch::manual_seed(3);
    auto plain = test::modelNamed(name, 3, 3, false);
    auto checkpointed = test::modelNamed(name, 3, 3, true);
    test::copyState(*plain, *checkpointed);
    const auto x = torch::randn({2, 3, 48, 48});  // layer4 at 6x6 (OS8) and 3x3 (OS16)
    const auto y = torch::randint(0, 3, {2, 48, 48});
    torch::manual_seed(4);
    const auto a = test::forwardBackward(*plain, x, y, true);
    torch::manual_seed(4);
    const auto b = test::forwardBackward(*checkpointed, x, y, true);
    EXPECT_LT(test::relativeError(b.loss, a.loss), 1e-6);
    test::expectSameGradients(b, a, 1e-5);
    const auto buffers = plain->named_buffers();
    for (const auto& buffer : checkpointed->named_buffers())
      if (buffer.key().find("running_mean") != std::string::npos)
        EXPECT_LT(test::relativeError(buffer.value(), buffers[buffer.key()]), 1e-6) << buffer.key();
  }
}

// A whole torchvision DeepLabV3 file as the pretrained encoder of both DeepLabs (its
// backbone. names), and the encoder's parameters are the optimizer's encoder group.
TEST(SegmentationModels, PretrainedEncoderFromATorchvisionDeepLab) {
  if (!test::pythonTorchAvailable()) GEODL_REFERENCE_MISSING("Debian's python3-torch is not installed");
  const std::string path = test::tempPath("deeplab_encoder.pt");
  ASSERT_TRUE(test::runPythonReference("write_torchvision_encoder.py", "deeplabv3_resnet50 " + path));
  const auto state = test::loadPickledDict(path);
  for (const std::string name : {"deeplabv3_resnet50", "deeplabv3plus_resnet50"}) {
    SCOPED_TRACE(name);
    auto model = test::modelNamed(name, 3, 2);
    const auto log = model->loadPretrainedEncoder(path);
    ASSERT_FALSE(log.empty());
    EXPECT_NE(log[0].find("resnet50 encoder tensors loaded"), std::string::npos) << log[0];
    auto* segmenter = dynamic_cast<ResNetSegmenterImpl*>(model.get());
    ASSERT_NE(segmenter, nullptr);
    for (const auto& p : segmenter->encoder->named_parameters())
      EXPECT_TRUE(torch::equal(p.value(), state.at("backbone." + p.key()).toTensor())) << p.key();
    EXPECT_EQ(model->encoderParameters().size(), segmenter->encoder->parameters().size());
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace geodl
