// The ResNet-encoder UNets: the encoder against torchvision's ResNets (same names, same
// features from the same weights), the decoder's shapes and smp's names, checkpointed
// gradients against the plain model's, and the fused inference path against the plain ops.
#include <gtest/gtest.h>

#include "core/reference_missing.h"

#include <set>

#include "base/errors.h"
#include "core/device.h"
#include "core/models.h"
#include "core/pretrained_encoder.h"
#include "core/resnet_unet.h"
#include "core/test_support.h"

namespace geodl {
namespace {

// Runs f, which must throw InputError with `part` in its message.
void expectInputError(const std::function<void()>& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing: " << part;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

class TorchvisionResNet : public ::testing::TestWithParam<int> {};

TEST_P(TorchvisionResNet, SameNamesAndFeaturesAsTorchvision) {
  const int depth = GetParam();
  const std::string path = test::tempPath("resnet" + std::to_string(depth) + ".pt");
  if (!test::pythonTorchAvailable())
    GEODL_REFERENCE_MISSING("Debian's python3-torch is not installed (scripts/install-deps.sh installs it)");
  // 4 bands (the first convolution rebuilt), sides not powers of two.
  ASSERT_TRUE(test::runPythonReference("torchvision_resnet.py", std::to_string(depth) + " 4 72 40 " + path));
  auto ref = test::loadPickledDict(path);
  std::remove(path.c_str());
  ResNetEncoder encoder(4, depth);
  test::loadStateDict(*encoder, ref.at("state").toGenericDict());
  int64_t count = 0;
  for (const auto& p : encoder->parameters()) count += p.numel();
  EXPECT_EQ(count, ref.at("parameters").toTensor().item<int64_t>());
  const auto x = ref.at("input").toTensor();
  encoder->eval();
  {
    torch::NoGradGuard no_grad;
    const auto features = encoder->forward(x);
    ASSERT_EQ(features.size(), 5u);
    for (size_t i = 0; i < 5; ++i) {
      const auto expected = ref.at("eval_" + std::to_string(i)).toTensor();
      EXPECT_EQ(features[i].sizes(), expected.sizes()) << "stage " << i;
      EXPECT_EQ(features[i].size(1), encoder->channels()[i]);
      EXPECT_LT(test::relativeError(features[i], expected), 1e-4) << "stage " << i;
    }
  }
  encoder->train();
  EXPECT_LT(test::relativeError(encoder->forward(x).back().detach(), ref.at("train_layer4").toTensor()), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Depths, TorchvisionResNet, ::testing::Values(18, 34, 50));

// segmentation-models-pytorch's Unet("resnet34") with one class has 24,436,369 parameters
// (its summary's figure); the 18 and 50 differ from it only in the encoder, which the
// torchvision test checks.
TEST(ResNetUNet, ParameterCountIsSmps) {
  ModelSpec s = modelSpecFromName("resnet34_unet");
  s.bands = 3;
  s.classes = 1;
  EXPECT_EQ(parameterCount(s), 24436369);
}

// (The logits at any input size: SegmentationModels.LogitsAtTheInputSize.)
TEST(ResNetUNet, SmpsNamesAndWidths) {
  torch::manual_seed(0);
  for (const std::string name : {"resnet18_unet", "resnet50_unet"}) {
    SCOPED_TRACE(name);
    auto model = test::modelNamed(name, 5, 3);
    std::set<std::string> names;
    for (const auto& p : model->named_parameters()) names.insert(p.key());
    for (const auto& b : model->named_buffers()) names.insert(b.key());
    for (const char* key : {"encoder.conv1.weight", "encoder.bn1.running_var", "encoder.layer1.0.conv1.weight",
                            "encoder.layer2.0.downsample.0.weight", "encoder.layer4.1.bn2.bias",
                            "decoder.blocks.0.conv1.0.weight", "decoder.blocks.0.conv1.1.running_mean",
                            "decoder.blocks.4.conv2.1.weight", "segmentation_head.0.weight",
                            "segmentation_head.0.bias"})
      EXPECT_TRUE(names.count(key)) << key;
    // Decoder widths 256-128-64-32-16; block 0 reads layer4 and layer3.
    const int64_t e = name == "resnet50_unet" ? 4 : 1;
    EXPECT_EQ(model->named_parameters()["decoder.blocks.0.conv1.0.weight"].sizes(),
              (std::vector<int64_t>{256, 512 * e + 256 * e, 3, 3}));
    EXPECT_EQ(model->named_parameters()["decoder.blocks.4.conv1.0.weight"].sizes(),
              (std::vector<int64_t>{16, 32, 3, 3}));
    EXPECT_EQ(model->named_parameters()["segmentation_head.0.weight"].sizes(), (std::vector<int64_t>{3, 16, 3, 3}));
  }
}

// Gradients of the checkpointed model (each encoder stage and decoder block recomputed in
// backward) against the plain model's, on the same weights and batch.
TEST(ResNetUNet, CheckpointedGradientsEqualThePlainModel) {
  for (bool bf16 : {false, true}) {
    if (bf16 && cpuBf16Instructions().empty()) {
      std::cout << "bf16 part skipped: this CPU has neither AVX512_BF16 nor AMX-BF16\n";
      continue;
    }
    SCOPED_TRACE(bf16 ? "bf16 autocast" : "fp32");
    torch::manual_seed(3);
    auto plain = test::modelNamed("resnet18_unet", 3, 3, false);
    auto checkpointed = test::modelNamed("resnet18_unet", 3, 3, true);
    test::copyState(*plain, *checkpointed);
    const auto x = torch::randn({2, 3, 64, 64});
    const auto y = torch::randint(0, 3, {2, 64, 64});
    const auto a = test::forwardBackward(*plain, x, y, true, bf16);
    const auto b = test::forwardBackward(*checkpointed, x, y, true, bf16);
    if (!bf16) {
      test::expectSameGradients(b, a, 1e-5);
    } else {
      // In bfloat16 the recompute is exact: the gradients of the decoder and of layer4
      // equal the plain model's. Below, a feature that feeds both the next stage (twice:
      // conv1 and downsample) and a skip gets three bf16 gradients, which the checkpointed
      // model adds in another order: 1-2% apart there, where bf16 and fp32 differ by 60%
      // at random weights.
      ASSERT_EQ(a.grads.size(), b.grads.size());
      for (size_t i = 0; i < a.grads.size(); ++i) {
        const std::string& name = a.grads[i].first;
        const bool exact = name.rfind("decoder.", 0) == 0 || name.rfind("segmentation_head.", 0) == 0 ||
                           name.rfind("encoder.layer4.", 0) == 0;
        EXPECT_LT(test::relativeError(b.grads[i].second, a.grads[i].second), exact ? 1e-6 : 0.03) << name;
      }
      EXPECT_LT(test::relativeError(b.input_grad, a.input_grad), 0.03);
    }
    // The running statistics moved once per step either way.
    EXPECT_LT(test::relativeError(checkpointed->named_buffers()["encoder.layer1.0.bn1.running_mean"],
                                  plain->named_buffers()["encoder.layer1.0.bn1.running_mean"]),
              1e-6);
  }
}

// Inference on the CPU (BatchNorm folded into the convolutions, channels last) against the
// plain ops in eval mode (autograd on takes them).
TEST(ResNetUNet, FusedInferenceEqualsThePlainOps) {
  for (const std::string name : {"resnet34_unet", "resnet50_unet"}) {
    SCOPED_TRACE(name);
    torch::manual_seed(5);
    auto model = test::modelNamed(name, 3, 4);
    {
      torch::NoGradGuard no_grad;
      for (auto& b : model->named_buffers())
        if (b.key().find("running_var") != std::string::npos) b.value().uniform_(0.5, 1.5);
    }
    model->eval();
    const auto x = torch::randn({2, 3, 64, 80});
    const torch::Tensor plain = model->forward(x).detach();
    torch::Tensor fused;
    {
      torch::NoGradGuard no_grad;
      fused = model->forward(x);
    }
    EXPECT_LT(test::relativeError(fused, plain), 1e-5);
  }
}

// A pretrained encoder file as users write it (torchvision's state dict, torch.save'd):
// every encoder tensor loaded, other band counts adapted, a DeepLabV3's backbone accepted,
// and the first missing or mismatched name given.
TEST(ResNetUNet, PretrainedEncoderFromATorchvisionFile) {
  if (!test::pythonTorchAvailable()) GEODL_REFERENCE_MISSING("Debian's python3-torch is not installed");
  const std::string r18 = test::tempPath("resnet18.pt"), deeplab = test::tempPath("deeplab.pt");
  ASSERT_TRUE(test::runPythonReference("write_torchvision_encoder.py", "resnet18 " + r18));
  const auto state = test::loadPickledDict(r18);
  auto model = std::dynamic_pointer_cast<ResNetUNetImpl>(test::modelNamed("resnet18_unet", 3, 2));
  const auto log = model->loadPretrainedEncoder(r18);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("resnet18 encoder tensors loaded"), std::string::npos) << log[0];
  for (const auto& p : model->encoder->named_parameters())
    EXPECT_TRUE(torch::equal(p.value(), state.at(p.key()).toTensor())) << p.key();
  for (const auto& b : model->encoder->named_buffers())
    EXPECT_TRUE(torch::equal(b.value(), state.at(b.key()).toTensor())) << b.key();

  // 5 bands: RGB filters for the first three, their mean for the others, all times 3/5.
  auto five = std::dynamic_pointer_cast<ResNetUNetImpl>(test::modelNamed("resnet18_unet", 5, 2));
  const auto log5 = five->loadPretrainedEncoder(r18);
  ASSERT_EQ(log5.size(), 2u);
  EXPECT_NE(log5[1].find("adapted to 5 bands"), std::string::npos);
  const auto rgb = state.at("conv1.weight").toTensor();
  const auto w = five->encoder->conv1->weight;
  EXPECT_TRUE(torch::allclose(w.narrow(1, 0, 3), rgb * 0.6));
  EXPECT_TRUE(torch::allclose(w.select(1, 4), rgb.mean(1) * 0.6));
  // 1 band: its filter times 3 (the sum of the RGB filters' scale).
  EXPECT_TRUE(torch::allclose(adaptFirstConvolution(rgb, 1), rgb.narrow(1, 0, 1) * 3));

  // A resnet18 file for resnet34: the first tensor it lacks is named.
  auto r34 = std::dynamic_pointer_cast<ResNetUNetImpl>(test::modelNamed("resnet34_unet", 3, 2));
  expectInputError([&] { r34->loadPretrainedEncoder(r18); },
                              "has no 'layer1.2.conv1.weight'; it must hold torchvision's resnet34 weights");
  // A resnet18 file for resnet50: the first shape that differs.
  auto r50 = std::dynamic_pointer_cast<ResNetUNetImpl>(test::modelNamed("resnet50_unet", 3, 2));
  expectInputError([&] { r50->loadPretrainedEncoder(r18); },
                              "gives 'layer1.0.conv1.weight' the shape [64, 64, 3, 3] but resnet50's needs [64, 64, 1, 1]");
  // A whole DeepLabV3 (its backbone. names) for resnet50.
  ASSERT_TRUE(test::runPythonReference("write_torchvision_encoder.py", "deeplabv3_resnet50 " + deeplab));
  EXPECT_EQ(r50->loadPretrainedEncoder(deeplab).size(), 1u);
  const auto dl = test::loadPickledDict(deeplab);
  EXPECT_TRUE(torch::equal(r50->encoder->layer4->named_parameters()["2.conv3.weight"],
                           dl.at("backbone.layer4.2.conv3.weight").toTensor()));
  expectInputError([&] { r50->loadPretrainedEncoder(test::tempPath("none.pt")); },
                              "cannot read the pretrained encoder file");
  std::remove(r18.c_str());
  std::remove(deeplab.c_str());
}

TEST(ResNetUNet, BatchNormFoldsIntoItsConvolution) {
  torch::manual_seed(8);
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 5, 3).padding(1));
  torch::nn::BatchNorm2d bn(5);
  {
    torch::NoGradGuard no_grad;
    bn->running_mean.uniform_(-1, 1);
    bn->running_var.uniform_(0.2, 2);
    bn->weight.uniform_(0.5, 1.5);
    bn->bias.uniform_(-0.5, 0.5);
  }
  bn->eval();
  const auto x = torch::randn({2, 3, 9, 7});
  auto [w, b] = foldBatchNorm(*conv, *bn);
  EXPECT_LT(test::relativeError(torch::conv2d(x, w, b, 1, 1), bn->forward(conv->forward(x))), 1e-6);
}

}  // namespace
}  // namespace geodl
