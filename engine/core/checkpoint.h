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
