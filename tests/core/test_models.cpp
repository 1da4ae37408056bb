#include <gtest/gtest.h>

#include "core/reference_missing.h"

#include <cstdlib>
#include <iostream>

#include "base/errors.h"
#include "core/model_spec.h"
#include "core/device.h"
#include "core/models.h"
#include "core/test_support.h"

namespace geodl {
namespace {

TEST(ModelSpec, NamesParseAndCheckpointedUnetIsSmallUnetWithCheckpointing) {
  EXPECT_EQ(modelSpecFromName("unet").architecture, Architecture::UNet);
  EXPECT_FALSE(modelSpecFromName("unetsmall").checkpoint);
  const auto ck = modelSpecFromName("checkpointed_unet");
  EXPECT_EQ(ck.architecture, Architecture::UNetSmall);
  EXPECT_TRUE(ck.checkpoint);
  EXPECT_EQ(modelSpecFromName("ternausnet").architecture, Architecture::TernausNet);
}

TEST(ModelSpec, UnknownNameListsTheValidOnes) {
  try {
    modelSpecFromName("deeplab");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "unknown model 'deeplab'; choose one of: unet unetsmall checkpointed_unet ternausnet resnet18_unet "
                 "resnet34_unet resnet50_unet resnet34_unetplusplus deeplabv3_resnet50 deeplabv3plus_resnet50 "
                 "segformer_b0 segformer_b1 segformer_b2 segformer_b3 segformer_b4 segformer_b5 dofa_base dofa_large");
  }
}

TEST(ModelSpec, BadBandsClassesAndDropoutAreRefused) {
  auto s = test::specNamed("unet", 0, 2);
  EXPECT_THROW(makeModel(s), InputError);
  s = test::specNamed("unet", 3, 0);
  EXPECT_THROW(makeModel(s), InputError);
  s = test::specNamed("unet", 3, 2);
  s.dropout = true;
  s.dropout_probability = 1.0;
  EXPECT_THROW(makeModel(s), InputError);
}

TEST(ModelSpec, ParameterCountsMatchGeoDeepLearning) {
  // unetsmall's count equals geo-deep-learning's UNetSmall(5, 3) (see the Python reference).
  EXPECT_EQ(parameterCount(test::specNamed("unetsmall", 3, 5)), 1798643);
  EXPECT_EQ(parameterCount(test::specNamed("checkpointed_unet", 3, 5)), 1798643);
  // One more band adds one 3x3 filter slice to each of the first conv's 32 filters.
  EXPECT_EQ(parameterCount(test::specNamed("unetsmall", 4, 5)) - parameterCount(test::specNamed("unetsmall", 3, 5)),
            32 * 9);
}

struct ShapeCase {
  std::string model;
  int bands, classes, height, width;
};

class ModelShapes : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(ModelShapes, OutputHasClassesAtInputSize) {
  const auto c = GetParam();
  torch::manual_seed(0);
  auto model = makeModel(test::specNamed(c.model, c.bands, c.classes));
  model->eval();
  torch::NoGradGuard no_grad;
  auto out = model->forward(torch::randn({2, c.bands, c.height, c.width}));
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{2, c.classes, c.height, c.width}));
  EXPECT_TRUE(torch::isfinite(out).all().item<bool>());
}

INSTANTIATE_TEST_SUITE_P(
    Architectures, ModelShapes,
    ::testing::Values(ShapeCase{"unetsmall", 3, 5, 32, 32}, ShapeCase{"unetsmall", 1, 2, 30, 46},
                      ShapeCase{"unetsmall", 8, 11, 64, 40}, ShapeCase{"unet", 4, 3, 32, 48},
                      ShapeCase{"ternausnet", 3, 4, 32, 32}, ShapeCase{"ternausnet", 5, 2, 64, 32},
                      ShapeCase{"resnet18_unet", 4, 3, 48, 80}, ShapeCase{"resnet34_unet", 1, 2, 64, 64},
                      ShapeCase{"resnet50_unet", 3, 6, 40, 40}, ShapeCase{"resnet34_unetplusplus", 2, 3, 40, 56},
                      ShapeCase{"deeplabv3_resnet50", 3, 2, 36, 44}, ShapeCase{"deeplabv3plus_resnet50", 1, 4, 40, 40}),
    [](const ::testing::TestParamInfo<ShapeCase>& info) {
      const auto& c = info.param;
      return c.model + "_" + std::to_string(c.bands) + "bands_" + std::to_string(c.height) + "x" +
             std::to_string(c.width);
    });

// The C++ UNets against geo-deep-learning's PyTorch code: same state-dict names and
// shapes, same outputs from the same weights, in eval and training mode.
class GdlReference : public ::testing::TestWithParam<std::string> {};

TEST_P(GdlReference, SameNamesAndOutputsAsGeoDeepLearning) {
  const std::string name = GetParam();
  const std::string path = test::tempPath(name + "_ref.pt");
  if (!test::pythonTorchAvailable())
    GEODL_REFERENCE_MISSING("Debian's python3-torch is not installed (scripts/install-deps.sh installs it)");
  // Odd sizes exercise the skip and output resizing.
  ASSERT_TRUE(test::runPythonReference("gdl_models.py", name + " 4 3 36 44 " + path));
  auto ref = test::loadPickledDict(path);
  std::remove(path.c_str());
  auto model = makeModel(test::specNamed(name, 4, 3));
  test::loadStateDict(*model, ref.at("state").toGenericDict());
  EXPECT_EQ(parameterCount(test::specNamed(name, 4, 3)), ref.at("parameters").toTensor().item<int64_t>());
  auto x = ref.at("input").toTensor();
  model->eval();
  {
    torch::NoGradGuard no_grad;
    EXPECT_LT(test::relativeError(model->forward(x), ref.at("eval_output").toTensor()), 1e-5);
  }
  model->train();
  for (bool checkpoint : {false, true}) {
    auto fresh = makeModel(test::specNamed(name, 4, 3));
    test::copyState(*model, *fresh);
    fresh->train();
    fresh->setCheckpointing(checkpoint);
    EXPECT_LT(test::relativeError(fresh->forward(x).detach(), ref.at("train_output").toTensor()),
              1e-5)
        << "checkpointing " << checkpoint;
  }
}

INSTANTIATE_TEST_SUITE_P(UNets, GdlReference, ::testing::Values("unetsmall", "unet"));

// bf16 inference (the weights cast once, bfloat16 inputs): the UNets' fused path and
// TernausNet's plain ops give fp32's logits within bfloat16's precision and nearly the
// same classes. Needs a CPU with bf16 instructions.
TEST(Bf16, InferenceFollowsFp32OnEveryArchitecture) {
  if (cpuBf16Instructions().empty())
    GTEST_SKIP() << "SKIPPED: this CPU has neither AVX512_BF16 nor AMX-BF16: no bf16 inference to check";
  for (const std::string name : {"unetsmall", "unet", "ternausnet", "resnet18_unet", "resnet50_unet",
                                 "resnet34_unetplusplus", "deeplabv3_resnet50", "deeplabv3plus_resnet50", "segformer_b0"}) {
    torch::manual_seed(3);
    auto model = makeModel(test::specNamed(name, 3, 4));
    model->eval();
    torch::NoGradGuard no_grad;
    const auto x = torch::randn({2, 3, 64, 64});  // TernausNet takes multiples of 32
    const auto fp32 = model->forward(x);
    model->to(torch::kBFloat16);
    const auto bf16 = model->forward(x.to(torch::kBFloat16));
    ASSERT_EQ(bf16.scalar_type(), torch::kBFloat16) << name;
    const auto back = bf16.to(torch::kFloat);
    const double error = (back - fp32).abs().max().item<double>() / fp32.abs().max().item<double>();
    const double agree = (back.argmax(1) == fp32.argmax(1)).to(torch::kFloat).mean().item<double>();
    EXPECT_LT(error, 0.05) << name;
    EXPECT_GT(agree, 0.95) << name;
    std::cout << name << ": bf16 within " << error << " of fp32's largest logit, classes agree on " << agree
              << std::endl;
  }
}

// bf16 where the CPU cannot: refused, naming the instructions; auto is fp32 there, and
// bf16 where the CPU has them. fp16 is for GPUs: auto on those before Ampere (no bfloat16).
TEST(Bf16, RefusedWithoutTheInstructionsWhereAutoIsFp32) {
  EXPECT_EQ(resolvePrecision("auto", "cpu"), cpuBf16Instructions().empty() ? "fp32" : "bf16");
  EXPECT_EQ(resolvePrecision("fp32", "cpu"), "fp32");
  const GpuInfo h200{0, "NVIDIA H200", 143771, 143000, 9, 0}, v100{1, "Tesla V100", 16384, 16000, 7, 0};
  EXPECT_EQ(resolvePrecision("auto", "cuda:0", h200), "bf16");
  EXPECT_EQ(resolvePrecision("bf16", "cuda:0", h200), "bf16");
  EXPECT_EQ(resolvePrecision("fp16", "cuda:0", h200), "fp16");
  EXPECT_EQ(resolvePrecision("fp32", "cuda:0", h200), "fp32");
  EXPECT_EQ(resolvePrecision("auto", "cuda:1", v100), "fp16");
  try {
    resolvePrecision("bf16", "cuda:1", v100);
    ADD_FAILURE() << "bf16 accepted on a GPU without it";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:1 (Tesla V100) is 7.0; use precision fp16"), std::string::npos)
        << e.what();
  }
  try {
    resolvePrecision("fp16", "cpu");
    ADD_FAILURE() << "fp16 accepted on the CPU";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fp16 is computed on GPUs only"), std::string::npos) << e.what();
  }
  EXPECT_THROW(resolvePrecision("fp8", "cpu"), InputError);
  setenv("DNNL_MAX_CPU_ISA", "AVX2", 1);  // as oneDNN's cap: no bf16 kernels
  EXPECT_EQ(cpuBf16Instructions(), "");
  EXPECT_EQ(resolvePrecision("auto", "cpu"), "fp32");
  try {
    resolvePrecision("bf16", "cpu");
    ADD_FAILURE() << "bf16 accepted without the instructions";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("AVX512_BF16 or AMX-BF16"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("capped at AVX2"), std::string::npos) << e.what();
  }
  unsetenv("DNNL_MAX_CPU_ISA");
}

}  // namespace
}  // namespace geodl
