// One training step on tensors: a function of model, batch and optimizer, with a place
// after backward where a gradient all-reduce (data-parallel training) slots in.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <optional>

#include "core/checkpoint.h"
#include "core/grad_scaler.h"
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
  // The forward under autocast on the batch's device in this type (autocastType: kBFloat16,
  // kHalf), or in float32 (kFloat).
  at::ScalarType autocast = at::kFloat;
  // Loss scaling (float16 autocast's): the loss scaled before backward, the gradients
  // unscaled after the hook, the optimizer's step skipped when one is not finite.
  GradScaler* scaler = nullptr;
  StepTimings* timings = nullptr;  // added to when given
  // The batch in this many parts, one after the other, their gradients accumulated: the
  // optimizer steps once on the whole batch, in less memory (BatchNorm sees each part's
  // statistics). trainStepFitting raises it when the device runs out of memory.
  int parts = 1;
  // Whether trainStepFitting may split batches: not with several ranks, whose gradient
  // all-reduce expects one backward per step on every rank.
  bool may_split = true;
};

// Forward, loss, backward, hook, optimizer step. Returns the batch loss.
double trainStep(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer,
                 const Batch& batch, const StepOptions& options);
double trainStep(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer,
                 const Batch& batch, const LossOptions& loss = {},
                 const GradientHook& after_backward = {});

// trainStep, and when the device runs out of memory in forward or backward (CUDA's
// out-of-memory error, or the CPU budget's), the same batch again in twice as many parts
// (options.parts, kept for the batches after), after giving the allocator's cache back,
// until it fits. `on_split(parts)` is told each time. The error goes on when it came in the
// optimizer's step (the weights may have changed), when a part is one sample already, or
// when splitting is not allowed (options.may_split).
double trainStepFitting(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer, const Batch& batch,
                        StepOptions& options, const std::function<void(int parts)>& on_split);

// The autocast type of a precision (resolvePrecision's): kBFloat16 for bf16, kHalf for fp16,
// kFloat (no autocast) for fp32.
at::ScalarType autocastType(const std::string& precision);

// Autocast in `type` (kBFloat16 on the CPU or a GPU, kHalf on a GPU) on `device` for the
// guard's lifetime (nothing for kFloat): convolutions run in that type, weights and optimizer
// state stay float32.
class Autocast {
 public:
  Autocast(at::ScalarType type, const torch::Device& device);

 private:
  std::optional<AutocastReplay> replay_;
};

}  // namespace geodl
