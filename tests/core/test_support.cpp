#include "core/test_support.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "core/train_step.h"

namespace geodl::test {

bool pythonTorchAvailable() {
  static const bool available =
      std::system(GEODL_PYTHON " -c 'import torch' > /dev/null 2>&1") == 0;
  return available;
}

bool runPythonReference(const std::string& script, const std::string& args) {
  if (!pythonTorchAvailable()) return false;
  const std::string command = std::string(GEODL_PYTHON) + " " + GEODL_TEST_SOURCE_DIR +
                              "/reference/" + script + " " + args;
  const int code = std::system(command.c_str());
  EXPECT_EQ(code, 0) << command;
  return code == 0;
}

ModelSpec specNamed(const std::string& name, int bands, int classes) {
  ModelSpec s = modelSpecFromName(name);
  s.bands = bands;
  s.classes = classes;
  if (isDofa(s.architecture)) {  // Sentinel-2's red, green, blue, near infrared, SWIR 1 and 2...
    static const double bands_um[] = {0.665, 0.56, 0.49, 0.842, 1.61, 2.19, 0.705, 0.74, 0.783, 0.865};
    for (int b = 0; b < bands; ++b) s.wavelengths.push_back(bands_um[b % 10] + 0.001 * (b / 10));
  }
  return s;
}

SegmentationModel modelNamed(const std::string& name, int bands, int classes, bool checkpoint) {
  ModelSpec s = specNamed(name, bands, classes);
  s.checkpoint = checkpoint;
  return makeModel(s);
}

std::string tempPath(const std::string& name) {
  return "/tmp/geodl_test_" + std::to_string(getpid()) + "_" + name;
}

c10::Dict<c10::IValue, c10::IValue> loadPickledDict(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return torch::pickle_load(bytes).toGenericDict();
}

void copyState(torch::nn::Module& source, torch::nn::Module& target) {
  torch::NoGradGuard no_grad;
  auto src_params = source.named_parameters();
  for (auto& p : target.named_parameters()) p.value().copy_(src_params[p.key()]);
  auto src_buffers = source.named_buffers();
  for (auto& b : target.named_buffers()) b.value().copy_(src_buffers[b.key()]);
}

void loadStateDict(torch::nn::Module& target, const c10::Dict<c10::IValue, c10::IValue>& state) {
  torch::NoGradGuard no_grad;
  size_t loaded = 0;
  auto load = [&](const std::string& name, torch::Tensor& t) {
    ASSERT_TRUE(state.contains(name)) << "reference has no " << name;
    auto source = state.at(name).toTensor();
    ASSERT_EQ(source.sizes(), t.sizes()) << name;
    t.copy_(source);
    ++loaded;
  };
  for (auto& p : target.named_parameters()) load(p.key(), p.value());
  for (auto& b : target.named_buffers()) load(b.key(), b.value());
  EXPECT_EQ(loaded, state.size()) << "the reference has names the model lacks";
}

double relativeError(const torch::Tensor& a, const torch::Tensor& b) {
  const double diff = (a.to(torch::kDouble) - b.to(torch::kDouble)).norm().item<double>();
  const double norm = b.to(torch::kDouble).norm().item<double>();
  return diff / std::max(norm, 1e-30);
}

StepGrads forwardBackward(SegmentationModelImpl& model, const torch::Tensor& images,
                          const torch::Tensor& labels, bool input_requires_grad, bool bf16) {
  StepGrads out;
  model.zero_grad();
  auto input = images.detach().clone().requires_grad_(input_requires_grad);
  {
    Autocast autocast(bf16 ? at::kBFloat16 : at::kFloat, input.device());
    out.loss = segmentationLoss(model.forward(input), labels, {});
  }
  out.loss.backward();
  if (input_requires_grad) out.input_grad = input.grad().clone();
  for (auto& p : model.named_parameters()) {
    out.grads.emplace_back(p.key(),
                           p.value().grad().defined() ? p.value().grad().clone() : torch::Tensor());
  }
  return out;
}

void expectSameGradients(const StepGrads& a, const StepGrads& b, double tolerance) {
  EXPECT_LT(relativeError(a.loss, b.loss), tolerance) << "loss";
  if (b.input_grad.defined()) {
    ASSERT_TRUE(a.input_grad.defined());
    EXPECT_LT(relativeError(a.input_grad, b.input_grad), tolerance) << "input gradient";
  }
  ASSERT_EQ(a.grads.size(), b.grads.size());
  for (size_t i = 0; i < a.grads.size(); ++i) {
    ASSERT_EQ(a.grads[i].first, b.grads[i].first);
    ASSERT_TRUE(a.grads[i].second.defined()) << a.grads[i].first << " has no gradient";
    ASSERT_TRUE(b.grads[i].second.defined()) << b.grads[i].first << " has no gradient";
    EXPECT_LT(relativeError(a.grads[i].second, b.grads[i].second), tolerance)
        << a.grads[i].first;
  }
}

}  // namespace geodl::test
