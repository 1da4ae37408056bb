#include "core/train_step.h"

#include <torch/cuda.h>

#include <chrono>

namespace geodl {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start, const torch::Tensor& on) {
  if (on.is_cuda()) torch::cuda::synchronize();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

Bf16Autocast::Bf16Autocast(bool enabled, const torch::Device& device) {
  if (!enabled) return;
  AutocastState state = AutocastState::current();
  if (device.is_cuda()) {
    state.gpu = true;
    state.gpu_type = at::kBFloat16;
  } else {
    state.cpu = true;
    state.cpu_type = at::kBFloat16;
  }
  replay_.emplace(state);
}

double trainStep(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer,
                 const Batch& batch, const StepOptions& options) {
  model.train();
  optimizer.zero_grad();
  auto start = Clock::now();
  torch::Tensor value;
  {
    Bf16Autocast autocast(options.bf16_autocast, batch.images.device());
    value = segmentationLoss(model.forward(batch.images), batch.labels, options.loss);
  }
  if (options.timings) {
    options.timings->forward += secondsSince(start, value);
    start = Clock::now();
  }
  value.backward();
  if (options.after_backward) options.after_backward(model);
  if (options.timings) {
    options.timings->backward += secondsSince(start, value);
    start = Clock::now();
  }
  optimizer.step();
  const double loss = value.item<double>();
  if (options.timings) options.timings->optimizer += secondsSince(start, value);
  return loss;
}

double trainStep(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer,
                 const Batch& batch, const LossOptions& loss, const GradientHook& after_backward) {
  StepOptions options;
  options.loss = loss;
  options.after_backward = after_backward;
  return trainStep(model, optimizer, batch, options);
}

}  // namespace geodl
