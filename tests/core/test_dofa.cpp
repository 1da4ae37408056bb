// DOFA (dofa_base, dofa_large) against TorchGeo 0.7.1's DOFA itself, timm's position-embedding
// resampling and smp 0.6's UPerNet decoder (tests/reference/dofa_torchgeo.py): the same logits
// from the same weights at two window sizes (one the pretraining grid's, one resampled), the
// same parameter counts, TorchGeo's encoder file as a pretrained encoder; checkpointed
// gradients against the plain model's; the wavelengths' part.
#include <gtest/gtest.h>

#include "core/reference_missing.h"

#include <cstdio>
#include <functional>

#include "base/errors.h"
#include "core/device.h"
#include "core/dofa.h"
#include "core/test_support.h"

namespace geodl {
namespace {

void expectInputError(const std::function<void()>& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one with: " << part;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

constexpr const char* kMissing = "torchgeo, timm or segmentation-models-pytorch is not installed "
                                 "(scripts/install-deps.sh installs them)";

TEST(DofaReference, SameLogitsAsTorchGeoAndSmpFromTheSameWeights) {
  const std::string path = test::tempPath("dofa_base.pt");
  const std::string folder = path.substr(0, path.rfind('/'));
  if (!test::runPythonReference("dofa_torchgeo.py", "dofa_base 5 96x64,224x224 0.665,0.56,0.49,0.842 " + path))
    GEODL_REFERENCE_MISSING(kMissing);
  const auto ref = test::loadPickledDict(path);
  std::remove(path.c_str());
  auto model = test::modelNamed("dofa_base", 4, 5);
  test::loadStateDict(*model, ref.at("state").toGenericDict());
  EXPECT_EQ(parameterCount(test::specNamed("dofa_base", 4, 5)), ref.at("parameters").toTensor().item<int64_t>());
  model->eval();
  const auto check = [&] {
    for (int i = 0; i < 2; ++i) {
      SCOPED_TRACE("window " + std::to_string(i));
      const auto x = ref.at("input" + std::to_string(i)).toTensor();
      const auto expected = ref.at("logits" + std::to_string(i)).toTensor();
      torch::NoGradGuard no_grad;
      const auto logits = model->forward(x);
      ASSERT_EQ(logits.sizes(), expected.sizes());
      std::cout << "window " << x.size(2) << "x" << x.size(3) << ": relative error " << test::relativeError(logits, expected)
                << ", largest difference " << (logits - expected).abs().max().item<double>() << std::endl;
      EXPECT_LT(test::relativeError(logits, expected), 1e-4);
      EXPECT_LT((logits - expected).abs().max().item<double>(), 1e-4 * (1 + expected.abs().max().item<double>()));
    }
  };
  check();
  // TorchGeo's encoder as its weights files hold it (an OrderedDict without prefix, with the
  // classification norm and head): the file's tensors replace random ones.
  const std::string encoder_file = folder + "/dofa_base_torchgeo.pth";
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->encoderParameters()) p.uniform_(-1, 1);
  }
  const auto log = model->loadPretrainedEncoder(encoder_file);
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log[0].find("dofa_base encoder tensors loaded from"), std::string::npos) << log[0];
  check();
  auto large = test::modelNamed("dofa_large", 4, 5);
  try {
    large->loadPretrainedEncoder(encoder_file);
    ADD_FAILURE() << "a dofa_base encoder loaded into a dofa_large";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("but dofa_large's needs"), std::string::npos) << e.what();
  }
  std::remove(encoder_file.c_str());
}

TEST(Dofa, ParameterCountsAreTorchGeosWithSmpsUperNet) {
  const std::string path = test::tempPath("dofa_counts.pt");
  if (!test::runPythonReference("dofa_torchgeo.py", "counts " + path)) GEODL_REFERENCE_MISSING(kMissing);
  const auto counts = test::loadPickledDict(path).at("counts").toTensor();
  std::remove(path.c_str());
  EXPECT_EQ(parameterCount(test::specNamed("dofa_base", 3, 1)), counts[0].item<int64_t>());
  EXPECT_EQ(parameterCount(test::specNamed("dofa_large", 3, 1)), counts[1].item<int64_t>());
}

// The position embedding of the pretraining grid comes back unchanged for that grid, and the
// resampled one keeps the class token's.
TEST(Dofa, PositionEmbeddingResampledForOtherGrids) {
  const auto pos = torch::randn({1, 1 + 14 * 14, 8});
  EXPECT_TRUE(torch::equal(resamplePositionEmbedding(pos, 14, 14, 14, 14), pos));
  const auto other = resamplePositionEmbedding(pos, 14, 14, 6, 4);
  EXPECT_EQ(other.sizes(), (std::vector<int64_t>{1, 25, 8}));
  EXPECT_TRUE(torch::equal(other.narrow(1, 0, 1), pos.narrow(1, 0, 1)));
  // A constant grid stays constant (the antialiased bicubic's weights sum to one).
  const auto flat = torch::ones({1, 197, 2});
  EXPECT_LT((resamplePositionEmbedding(flat, 14, 14, 5, 9) - 1).abs().max().item<double>(), 1e-5);
}

// Any input size: padded to multiples of 16, the logits cropped back. Other wavelengths give
// other logits from the same weights; a model without them, or with one per band missing or
// not in micrometres, is refused naming the fix.
TEST(Dofa, AnySizeAndTheWavelengthsMatter) {
  torch::manual_seed(2);
  auto spec = test::specNamed("dofa_base", 3, 4);
  auto model = makeModel(spec);
  model->eval();
  torch::NoGradGuard no_grad;
  const auto x = torch::randn({1, 3, 50, 70});
  const auto logits = model->forward(x);
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{1, 4, 50, 70}));
  auto swapped = spec;
  std::swap(swapped.wavelengths[0], swapped.wavelengths[2]);
  auto other = makeModel(swapped);
  test::copyState(*model, *other);
  other->eval();
  EXPECT_GT((other->forward(x) - logits).abs().max().item<double>(), 1e-4);
  auto none = spec;
  none.wavelengths.clear();
  expectInputError([&] { makeModel(none); },
                         "dofa_base needs the central wavelength of each of the 3 bands, in micrometres");
  auto short_list = spec;
  short_list.wavelengths.pop_back();
  expectInputError([&] { makeModel(short_list); }, "the wavelengths give 2 values for 3 bands");
  auto nanometres = spec;
  nanometres.wavelengths[1] = 560;
  expectInputError([&] { makeModel(nanometres); }, "band 2's wavelength 560 is not in micrometres");
}

// Checkpointing each block (and the neck with the decoder) changes no gradient; under bf16
// autocast too (where the CPU has the instructions), whose loss follows fp32's.
TEST(Dofa, CheckpointedGradientsAreThePlainOnes) {
  torch::manual_seed(5);
  auto plain = test::modelNamed("dofa_base", 3, 3);
  auto lean = test::modelNamed("dofa_base", 3, 3, true);
  test::copyState(*plain, *lean);
  plain->train();
  lean->train();
  const auto images = torch::randn({2, 3, 32, 48});
  const auto labels = torch::randint(0, 3, {2, 32, 48});
  const auto a = test::forwardBackward(*plain, images, labels, true);
  const auto b = test::forwardBackward(*lean, images, labels, true);
  EXPECT_NEAR(a.loss.item<double>(), b.loss.item<double>(), 1e-6);
  test::expectSameGradients(a, b, 1e-5);
  if (cpuBf16Instructions().empty()) {
    std::cout << "bf16 part skipped: this CPU has neither AVX512_BF16 nor AMX-BF16\n";
    return;
  }
  const auto a16 = test::forwardBackward(*plain, images, labels, true, true);
  const auto b16 = test::forwardBackward(*lean, images, labels, true, true);
  EXPECT_LT(test::relativeError(a16.loss, a.loss), 0.02) << "bf16's loss against fp32's";
  test::expectSameGradients(b16, a16, 1e-5);
}

}  // namespace
}  // namespace geodl
