// Gradient checkpointing for LibTorch: run a function without keeping its activations and
// recompute it during backward (LibTorch has no checkpoint API of its own).
#pragma once

#include <torch/torch.h>

#include <functional>
#include <vector>

namespace geodl {

using CheckpointFn = std::function<torch::Tensor(const std::vector<torch::Tensor>& inputs)>;

// Returns fn(inputs), keeping only `inputs` for backward. `module` holds the parameters fn
// uses: they receive gradients even when no input requires grad, and its buffers (such as
// BatchNorm running statistics) are restored after the recompute so they change once per
// step. Random draws (dropout) replay identically during the recompute.
torch::Tensor checkpoint(const CheckpointFn& fn, const std::vector<torch::Tensor>& inputs,
                         torch::nn::Module& module);

// fn(inputs), checkpointed (as checkpoint()) when lean; otherwise called directly.
torch::Tensor checkpointedIf(bool lean, const CheckpointFn& fn, const std::vector<torch::Tensor>& inputs,
                             torch::nn::Module& module);

// Autocast as it is at construction (CPU and CUDA: enabled, lower-precision type). A
// checkpointed block records it in forward and recomputes under it in backward, which runs
// after the autocast region has closed (as PyTorch's checkpoint does).
struct AutocastState {
  bool cpu = false, gpu = false;
  at::ScalarType cpu_type = at::kBFloat16, gpu_type = at::kHalf;
  static AutocastState current();
  void save(torch::autograd::AutogradContext* ctx) const;
  static AutocastState saved(torch::autograd::AutogradContext* ctx);
};

// Sets autocast to `state` for this object's life, then puts back the state it had.
class AutocastReplay {
 public:
  explicit AutocastReplay(const AutocastState& state);
  ~AutocastReplay();
  AutocastReplay(const AutocastReplay&) = delete;
  AutocastReplay& operator=(const AutocastReplay&) = delete;

 private:
  AutocastState previous_;
  bool changed_;
};

// The state of the default random generator of `device`.
torch::Tensor rngState(const torch::Device& device);

// Sets the default generator of `device` to `state` (when defined) for this object's life,
// then puts back the state it had.
class RngReplay {
 public:
  RngReplay(const torch::Tensor& state, const torch::Device& device);
  ~RngReplay();
  RngReplay(const RngReplay&) = delete;
  RngReplay& operator=(const RngReplay&) = delete;

 private:
  at::Generator generator_;
  torch::Tensor previous_;
};

}  // namespace geodl
