// Helpers shared by the core tests: reference files from Python, gradient comparison.
#pragma once

#include <torch/torch.h>

#include <string>

#include "core/models.h"

namespace geodl::test {

// Runs Debian's python3 with a script from tests/reference; returns false when python3
// or its torch module is missing (the caller skips with a message).
bool runPythonReference(const std::string& script, const std::string& args);
bool pythonTorchAvailable();

// The spec of the model named `name` (modelNames()) with `bands` and `classes`, and a model
// built from it (random weights). DOFA gets Sentinel-2's wavelengths (red, green, blue, near
// infrared, ...), one per band.
ModelSpec specNamed(const std::string& name, int bands, int classes);
SegmentationModel modelNamed(const std::string& name, int bands, int classes, bool checkpoint = false);

// A fresh temporary file path (removed by the caller or left in /tmp).
std::string tempPath(const std::string& name);

// The dict a Python torch.save wrote.
c10::Dict<c10::IValue, c10::IValue> loadPickledDict(const std::string& path);

// Copies every parameter and buffer of `source` into `target` (same architecture).
void copyState(torch::nn::Module& source, torch::nn::Module& target);

// Loads tensors by state-dict name; fails the test on a missing name or shape.
void loadStateDict(torch::nn::Module& target, const c10::Dict<c10::IValue, c10::IValue>& state);

// ||a - b|| / max(||b||, tiny)
double relativeError(const torch::Tensor& a, const torch::Tensor& b);

// Gradients of every parameter after one loss.backward() of model(images) against labels.
struct StepGrads {
  torch::Tensor loss;
  torch::Tensor input_grad;
  std::vector<std::pair<std::string, torch::Tensor>> grads;
};
// With `bf16`, the forward runs under CPU bfloat16 autocast.
StepGrads forwardBackward(SegmentationModelImpl& model, const torch::Tensor& images,
                          const torch::Tensor& labels, bool input_requires_grad, bool bf16 = false);

// Fails (EXPECT) when any gradient differs by more than `tolerance` relative.
void expectSameGradients(const StepGrads& a, const StepGrads& b, double tolerance);

}  // namespace geodl::test
