// One training step on tensors: a function of model, batch and optimizer, with a place
// after backward where a gradient all-reduce (data-parallel training) slots in.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <optional>

#include "core/checkpoint.h"
#include "core/losses.h"
#include "core/models.h"

namespace geodl {

struct Batch {
  torch::Tensor images;  // (N, bands, H, W) float
  torch::Tensor labels;  // (N, H, W) int64 class ids, ignore_index where unknown
};

// Called between backward and the optimizer step (e.g. to all-reduce gradients).
using GradientHook = std::function<void(torch::nn::Module&)>;

// Where a step's time goes (seconds; on a GPU each phase is synchronized when timed).
struct StepTimings {
  double forward = 0, backward = 0, optimizer = 0;
};

struct StepOptions {
  LossOptions loss;
  GradientHook after_backward;  // between backward and the optimizer step
  bool bf16_autocast = false;   // forward in bfloat16 autocast on the batch's device
  StepTimings* timings = nullptr;  // added to when given
};

// Forward, loss, backward, hook, optimizer step. Returns the batch loss.
double trainStep(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer,
                 const Batch& batch, const StepOptions& options);
double trainStep(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer,
                 const Batch& batch, const LossOptions& loss = {},
                 const GradientHook& after_backward = {});

// bfloat16 autocast on `device` (CPU or CUDA) for the guard's lifetime (nothing when
// disabled): convolutions run in bfloat16, weights and optimizer state stay float32.
class Bf16Autocast {
 public:
  Bf16Autocast(bool enabled, const torch::Device& device);

 private:
  std::optional<AutocastReplay> replay_;
};

}  // namespace geodl
