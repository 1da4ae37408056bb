#include <gtest/gtest.h>

#include "base/errors.h"
#include "core/model_spec.h"
#include "core/models.h"
#include "core/test_support.h"

namespace geodl {
namespace {

ModelSpec spec(const std::string& name, int bands, int classes) {
  ModelSpec s = modelSpecFromName(name);
  s.bands = bands;
  s.classes = classes;
  return s;
}

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
                 "unknown model 'deeplab'; choose one of: unet unetsmall checkpointed_unet ternausnet");
  }
}

TEST(ModelSpec, BadBandsClassesAndDropoutAreRefused) {
  auto s = spec("unet", 0, 2);
  EXPECT_THROW(makeModel(s), InputError);
  s = spec("unet", 3, 0);
  EXPECT_THROW(makeModel(s), InputError);
  s = spec("unet", 3, 2);
  s.dropout = true;
  s.dropout_probability = 1.0;
  EXPECT_THROW(makeModel(s), InputError);
}

TEST(ModelSpec, ParameterCountsMatchGeoDeepLearning) {
  // unetsmall's count equals geo-deep-learning's UNetSmall(5, 3) (see the Python reference).
  EXPECT_EQ(parameterCount(spec("unetsmall", 3, 5)), 1798643);
  EXPECT_EQ(parameterCount(spec("checkpointed_unet", 3, 5)), 1798643);
  // One more band adds one 3x3 filter slice to each of the first conv's 32 filters.
  EXPECT_EQ(parameterCount(spec("unetsmall", 4, 5)) - parameterCount(spec("unetsmall", 3, 5)),
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
  auto model = makeModel(spec(c.model, c.bands, c.classes));
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
                      ShapeCase{"ternausnet", 3, 4, 32, 32}, ShapeCase{"ternausnet", 5, 2, 64, 32}),
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
    GTEST_SKIP() << "Debian's python3-torch is not installed (scripts/install-deps.sh installs it)";
  // Odd sizes exercise the skip and output resizing.
  ASSERT_TRUE(test::runPythonReference("gdl_models.py", name + " 4 3 36 44 " + path));
  auto ref = test::loadPickledDict(path);
  std::remove(path.c_str());
  auto model = makeModel(spec(name, 4, 3));
  test::loadStateDict(*model, ref.at("state").toGenericDict());
  EXPECT_EQ(parameterCount(spec(name, 4, 3)), ref.at("parameters").toTensor().item<int64_t>());
  auto x = ref.at("input").toTensor();
  model->eval();
  {
    torch::NoGradGuard no_grad;
    EXPECT_LT(test::relativeError(model->forward(x), ref.at("eval_output").toTensor()), 1e-5);
  }
  model->train();
  for (bool checkpoint : {false, true}) {
    auto fresh = makeModel(spec(name, 4, 3));
    test::copyState(*model, *fresh);
    fresh->train();
    fresh->setCheckpointing(checkpoint);
    EXPECT_LT(test::relativeError(fresh->forward(x).detach(), ref.at("train_output").toTensor()),
              1e-5)
        << "checkpointing " << checkpoint;
  }
}

INSTANTIATE_TEST_SUITE_P(UNets, GdlReference, ::testing::Values("unetsmall", "unet"));

}  // namespace
}  // namespace geodl
