#include "core/train_step.h"

#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/memory.h"

namespace geodl {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start, const torch::Tensor& on) {
  if (on.is_cuda()) torch::cuda::synchronize();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

at::ScalarType autocastType(const std::string& precision) {
  if (precision == "bf16") return at::kBFloat16;
  if (precision == "fp16") return at::kHalf;
  return at::kFloat;
}

Autocast::Autocast(at::ScalarType type, const torch::Device& device) {
  if (type == at::kFloat) return;
  AutocastState state = AutocastState::current();
  if (device.is_cuda()) {
    state.gpu = true;
    state.gpu_type = type;
  } else {
    state.cpu = true;
    state.cpu_type = type;
  }
  replay_.emplace(state);
}

namespace {

// Forward and backward of the batch in options.parts parts (the loss of each weighted by its
// share of the samples, so that the gradients add up to the whole batch's); the batch loss.
double accumulateGradients(SegmentationModelImpl& model, const Batch& batch, const StepOptions& options) {
  const int64_t n = batch.images.size(0);
  const int64_t parts = std::clamp<int64_t>(options.parts, 1, std::max<int64_t>(n, 1));
  const auto images = parts == 1 ? std::vector<torch::Tensor>{batch.images} : batch.images.chunk(parts, 0);
  const auto labels = parts == 1 ? std::vector<torch::Tensor>{batch.labels} : batch.labels.chunk(parts, 0);
  double loss = 0;
  for (size_t i = 0; i < images.size(); ++i) {
    auto start = Clock::now();
    torch::Tensor value;
    {
      Autocast autocast(options.autocast, batch.images.device());
      value = segmentationLoss(model.forward(images[i]), labels[i], options.loss);
    }
    const double share = double(images[i].size(0)) / double(n);
    if (options.timings) {
      options.timings->forward += secondsSince(start, value);
      start = Clock::now();
    }
    const torch::Tensor part = images.size() == 1 ? value : value * share;
    (options.scaler ? options.scaler->scaled(part) : part).backward();
    loss += value.item<double>() * share;
    if (options.timings) options.timings->backward += secondsSince(start, value);
  }
  return loss;
}

double finishStep(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer, const StepOptions& options,
                  double loss, const torch::Tensor& on) {
  auto start = Clock::now();
  if (options.after_backward) options.after_backward(model);
  if (options.timings) {
    options.timings->backward += secondsSince(start, on);
    start = Clock::now();
  }
  // Scaled gradients are unscaled after the hook (an all-reduce sums them scaled: every rank
  // then finds the same ones finite or not, and all skip the step together).
  const bool finite = !options.scaler || options.scaler->unscale(optimizer);
  if (finite) optimizer.step();
  if (options.scaler) options.scaler->update(finite);
  if (options.timings) options.timings->optimizer += secondsSince(start, on);
  return loss;
}

}  // namespace

double trainStep(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer,
                 const Batch& batch, const StepOptions& options) {
  model.train();
  optimizer.zero_grad();
  const double loss = accumulateGradients(model, batch, options);
  return finishStep(model, optimizer, options, loss, batch.images);
}

double trainStepFitting(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer, const Batch& batch,
                        StepOptions& options, const std::function<void(int parts)>& on_split) {
  model.train();
  const int64_t n = batch.images.size(0);
  double loss = 0;
  for (;;) {
    optimizer.zero_grad();
    try {
      loss = accumulateGradients(model, batch, options);
      break;
    } catch (const c10::OutOfMemoryError&) {
      if (!options.may_split || options.parts >= n) throw;
    }
    // Out of memory in forward or backward: nothing has changed the weights yet.
    optimizer.zero_grad();
    releaseCachedMemory(batch.images.device().str());
    options.parts = int(std::min<int64_t>(int64_t(options.parts) * 2, n));
    if (on_split) on_split(options.parts);
  }
  return finishStep(model, optimizer, options, loss, batch.images);
}

double trainStep(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer,
                 const Batch& batch, const LossOptions& loss, const GradientHook& after_backward) {
  StepOptions options;
  options.loss = loss;
  options.after_backward = after_backward;
  return trainStep(model, optimizer, batch, options);
}

}  // namespace geodl
