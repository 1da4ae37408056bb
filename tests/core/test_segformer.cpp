// SegFormer B0-B5 against segmentation-models-pytorch 0.6's Segformer itself
// (tests/reference/segformer_smp.py): the same logits from the same weights at two window
// sizes, the same parameter counts, pretrained Mix Transformer weights from safetensors and
// torch.save files; checkpointed gradients against the plain model's; the attention of
// LibTorch 2.x's fused kernel against the written-out one.
#include <gtest/gtest.h>

#include "core/reference_missing.h"

#include <cstdio>
#include <optional>

#include "base/errors.h"
#include "core/device.h"
#include "core/segformer.h"
#include "core/test_support.h"
#include "core/torch_compat.h"

namespace geodl {
namespace {

struct SegformerCase {
  std::string name;
  int64_t height, width;  // multiples of 32: smp refuses others
};

class SegformerReference : public ::testing::TestWithParam<SegformerCase> {};

// The reference of a case: its dict; the encoder files lie beside `path`.
std::optional<c10::Dict<c10::IValue, c10::IValue>> smpReference(const SegformerCase& c, const std::string& path) {
  if (!test::runPythonReference("segformer_smp.py", c.name + " 4 5 " + std::to_string(c.height) + " " +
                                                        std::to_string(c.width) + " " + path))
    return std::nullopt;
  return test::loadPickledDict(path);
}

TEST_P(SegformerReference, SameLogitsAsSmpFromTheSameWeights) {
  const auto& c = GetParam();
  const std::string path = test::tempPath(c.name + "_" + std::to_string(c.height) + ".pt");
  const auto reference = smpReference(c, path);
  if (!reference)
    GEODL_REFERENCE_MISSING("segmentation-models-pytorch is not installed (scripts/install-deps.sh installs it)");
  const auto& ref = *reference;
  auto model = test::modelNamed(c.name, 4, 5);
  test::loadStateDict(*model, ref.at("state").toGenericDict());
  int64_t count = 0;
  for (const auto& p : model->parameters()) count += p.numel();
  EXPECT_EQ(count, ref.at("parameters").toTensor().item<int64_t>());
  model->eval();
  const auto x = ref.at("input").toTensor();
  const auto expected = ref.at("logits").toTensor();
  torch::Tensor logits;
  {
    torch::NoGradGuard no_grad;
    logits = model->forward(x);
  }
  ASSERT_EQ(logits.sizes(), expected.sizes());
  EXPECT_LT(test::relativeError(logits, expected), 1e-4);
  EXPECT_LT((logits - expected).abs().max().item<double>(), 1e-4 * (1 + expected.abs().max().item<double>()));
  std::remove(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Models, SegformerReference,
                         ::testing::Values(SegformerCase{"segformer_b0", 64, 96}, SegformerCase{"segformer_b0", 128, 64},
                                           SegformerCase{"segformer_b2", 64, 64}),
                         [](const auto& info) {
                           return info.param.name + "_" + std::to_string(info.param.height) + "x" +
                                  std::to_string(info.param.width);
                         });

TEST(Segformer, ParameterCountsAreSmps) {
  const std::string path = test::tempPath("segformer_counts.pt");
  if (!test::runPythonReference("segformer_smp.py", "counts " + path))
    GEODL_REFERENCE_MISSING("segmentation-models-pytorch is not installed (scripts/install-deps.sh installs it)");
  const auto counts = test::loadPickledDict(path).at("counts").toTensor();
  std::remove(path.c_str());
  for (int b = 0; b < 6; ++b) {
    ModelSpec spec = modelSpecFromName("segformer_b" + std::to_string(b));
    spec.bands = 3;
    spec.classes = 1;
    EXPECT_EQ(parameterCount(spec), counts[b].item<int64_t>()) << "segformer_b" << b;
  }
}

// The encoder of smp's model, from the safetensors file (smp's names, encoder.*) and from
// NVIDIA's layout in a torch.save'd OrderedDict (no prefix, a classification head): with the
// decoder's weights, the reference's logits again. A B0 file in a B2 is refused.
TEST(Segformer, PretrainedEncoderFromSafetensorsAndTorchSave) {
  const SegformerCase c{"segformer_b0", 64, 64};
  const std::string path = test::tempPath("segformer_b0_pretrained.pt");
  const auto reference = smpReference(c, path);
  if (!reference)
    GEODL_REFERENCE_MISSING("segmentation-models-pytorch is not installed (scripts/install-deps.sh installs it)");
  const auto& ref = *reference;
  const std::string folder = path.substr(0, path.rfind('/'));
  const auto state = ref.at("state").toGenericDict();
  const auto x = ref.at("input").toTensor();
  const auto expected = ref.at("logits").toTensor();
  for (const std::string file : {folder + "/segformer_b0_encoder.safetensors", folder + "/segformer_b0_mit.pth"}) {
    SCOPED_TRACE(file);
    auto model = test::modelNamed("segformer_b0", 4, 5);
    test::loadStateDict(*model, state);
    {
      torch::NoGradGuard no_grad;
      for (auto& p : model->encoderParameters()) p.uniform_(-1, 1);  // the file's must replace these
    }
    const auto log = model->loadPretrainedEncoder(file);
    ASSERT_FALSE(log.empty());
    EXPECT_NE(log[0].find("mit_b0 encoder tensors loaded from"), std::string::npos) << log[0];
    model->eval();
    torch::NoGradGuard no_grad;
    EXPECT_LT(test::relativeError(model->forward(x), expected), 1e-4);
  }
  auto b2 = test::modelNamed("segformer_b2", 4, 5);
  try {
    b2->loadPretrainedEncoder(folder + "/segformer_b0_encoder.safetensors");
    ADD_FAILURE() << "a B0 encoder loaded into a B2";
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("gives 'patch_embed1.proj.weight' the shape [32, 4, 7, 7] but mit_b2's needs [64, 4, 7, 7]"),
              std::string::npos)
        << m;
  }
  for (const char* f : {"/segformer_b0_encoder.safetensors", "/segformer_b0_mit.pth"}) std::remove((folder + f).c_str());
  std::remove(path.c_str());
}

// Hugging Face's names (SegformerModel's encoder) as smp's: key and value joined into kv.
TEST(Segformer, HuggingFaceNamesMapToSmps) {
  std::map<std::string, torch::Tensor> hf;
  hf["segformer.encoder.patch_embeddings.0.proj.weight"] = torch::ones({32, 3, 7, 7});
  hf["segformer.encoder.patch_embeddings.1.layer_norm.bias"] = torch::ones({64});
  hf["segformer.encoder.block.0.1.attention.self.query.weight"] = torch::ones({32, 32});
  hf["segformer.encoder.block.0.1.attention.self.key.weight"] = torch::zeros({32, 32});
  hf["segformer.encoder.block.0.1.attention.self.value.weight"] = torch::ones({32, 32});
  hf["segformer.encoder.block.3.0.attention.output.dense.bias"] = torch::ones({256});
  hf["segformer.encoder.block.2.1.attention.self.sr.weight"] = torch::ones({160, 160, 2, 2});
  hf["segformer.encoder.block.2.1.attention.self.layer_norm.weight"] = torch::ones({160});
  hf["segformer.encoder.block.1.0.layer_norm_2.weight"] = torch::ones({64});
  hf["segformer.encoder.block.1.0.mlp.dense1.weight"] = torch::ones({256, 64});
  hf["segformer.encoder.block.1.0.mlp.dwconv.dwconv.bias"] = torch::ones({256});
  hf["segformer.encoder.layer_norm.3.weight"] = torch::ones({256});
  hf["decode_head.classifier.weight"] = torch::ones({150, 256, 1, 1});
  const auto smp = mixTransformerFromHuggingFace(hf);
  for (const char* name :
       {"patch_embed1.proj.weight", "patch_embed2.norm.bias", "block1.1.attn.q.weight", "block4.0.attn.proj.bias",
        "block3.1.attn.sr.weight", "block3.1.attn.norm.weight", "block2.0.norm2.weight", "block2.0.mlp.fc1.weight",
        "block2.0.mlp.dwconv.dwconv.bias", "norm4.weight", "decode_head.classifier.weight"})
    EXPECT_TRUE(smp.count(name)) << name;
  ASSERT_TRUE(smp.count("block1.1.attn.kv.weight"));
  const auto kv = smp.at("block1.1.attn.kv.weight");
  EXPECT_EQ(kv.sizes(), (std::vector<int64_t>{64, 32}));
  EXPECT_EQ(kv.narrow(0, 0, 32).sum().item<double>(), 0);     // the keys first
  EXPECT_EQ(kv.narrow(0, 32, 32).sum().item<double>(), 1024);  // then the values
  EXPECT_EQ(smp.size(), hf.size() - 1);
}

// Any input size: padded to multiples of 32 by reflection, the logits cropped back.
TEST(Segformer, LogitsAtTheInputsSize) {
  auto model = test::modelNamed("segformer_b0", 3, 4);
  model->eval();
  torch::NoGradGuard no_grad;
  EXPECT_EQ(model->forward(torch::randn({1, 3, 50, 70})).sizes(), (std::vector<int64_t>{1, 4, 50, 70}));
  EXPECT_EQ(model->forward(torch::randn({1, 3, 8, 8})).sizes(), (std::vector<int64_t>{1, 4, 8, 8}));
}

// Checkpointing each block (and the decoder) changes no gradient, stochastic depth included
// (its draws replay in the recompute); under bf16 autocast too (where the CPU has the
// instructions), whose loss follows fp32's.
TEST(Segformer, CheckpointedGradientsAreThePlainOnes) {
  torch::manual_seed(5);
  auto plain = test::modelNamed("segformer_b0", 3, 3);
  auto lean = test::modelNamed("segformer_b0", 3, 3, true);
  test::copyState(*plain, *lean);
  plain->train();
  lean->train();
  const auto images = torch::randn({2, 3, 64, 64});
  const auto labels = torch::randint(0, 3, {2, 64, 64});
  torch::manual_seed(9);
  const auto a = test::forwardBackward(*plain, images, labels, true);
  torch::manual_seed(9);
  const auto b = test::forwardBackward(*lean, images, labels, true);
  EXPECT_NEAR(a.loss.item<double>(), b.loss.item<double>(), 1e-6);
  test::expectSameGradients(a, b, 1e-5);
  if (cpuBf16Instructions().empty()) {
    std::cout << "bf16 part skipped: this CPU has neither AVX512_BF16 nor AMX-BF16\n";
    return;
  }
  torch::manual_seed(9);
  const auto a16 = test::forwardBackward(*plain, images, labels, true, true);
  torch::manual_seed(9);
  const auto b16 = test::forwardBackward(*lean, images, labels, true, true);
  EXPECT_LT(test::relativeError(a16.loss, a.loss), 0.02) << "bf16's loss against fp32's";
  test::expectSameGradients(b16, a16, 1e-5);
}

// Stochastic depth is on in training (smp's drop_path_rate 0.1) and off in evaluation.
TEST(Segformer, StochasticDepthInTrainingOnly) {
  auto model = test::modelNamed("segformer_b0", 3, 2);
  const auto x = torch::randn({4, 3, 32, 32});
  torch::NoGradGuard no_grad;
  model->eval();
  EXPECT_TRUE(torch::equal(model->forward(x), model->forward(x)));
  model->train();
  torch::manual_seed(1);
  const auto first = model->forward(x);
  torch::manual_seed(2);
  EXPECT_FALSE(torch::allclose(first, model->forward(x)));
}

// LibTorch 2.x's scaled_dot_product_attention (the CUDA build; on the CPU its fused loop)
// gives the written-out attention's values, at SegFormer's shapes (keys reduced).
TEST(Attention, FusedKernelGivesThePlainValues) {
#if GEODL_TORCH_2
  torch::manual_seed(3);
  for (const auto& shape : std::vector<std::vector<int64_t>>{{2, 1, 256, 32}, {2, 5, 64, 32}}) {
    const auto q = torch::randn(shape);
    const auto k = torch::randn({shape[0], shape[1], shape[2] / 4, shape[3]});
    const auto v = torch::randn({shape[0], shape[1], shape[2] / 4, shape[3]});
    EXPECT_LT(test::relativeError(compat::attention(q, k, v), compat::plainAttention(q, k, v)), 1e-5);
  }
#else
  GTEST_SKIP() << "LibTorch " << TORCH_VERSION << " has no scaled_dot_product_attention: GeoDL runs the plain "
               << "attention here; the CUDA build's core tests compare the two";
#endif
}

}  // namespace
}  // namespace geodl
