// One training step on tensors: a function of model, batch and optimizer, with a place
// after backward where a gradient all-reduce (data-parallel training) slots in.
#pragma once

#include <torch/torch.h>

#include <functional>

#include "core/models.h"

namespace geodl {

struct Batch {
  torch::Tensor images;  // (N, bands, H, W) float
  torch::Tensor labels;  // (N, H, W) int64 class ids, ignore_index where unknown
};

struct LossOptions {
  int64_t ignore_index = -100;
  torch::Tensor class_weights;  // undefined: all classes weigh the same
};

// Called between backward and the optimizer step (e.g. to all-reduce gradients).
using GradientHook = std::function<void(torch::nn::Module&)>;

// Forward, cross-entropy, backward, hook, optimizer step. Returns the batch loss.
double trainStep(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer,
                 const Batch& batch, const LossOptions& loss = {},
                 const GradientHook& after_backward = {});

// The loss trainStep minimises.
torch::Tensor segmentationLoss(const torch::Tensor& logits, const torch::Tensor& labels,
                               const LossOptions& loss);

}  // namespace geodl
