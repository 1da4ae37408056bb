// Loss scaling for float16 autocast, the precision of GPUs without bfloat16: float16's range
// ends near 6e-5 (65504 at the top), where small gradients would underflow to zero, so the
// loss is multiplied by a scale before backward and the gradients divided by it before the
// optimizer's step. A step whose gradients hold inf or NaN (the scale was too large) is
// skipped and the scale halved; after `growth_interval` finite steps in a row it doubles.
// PyTorch's torch.amp.GradScaler with its defaults (the scale kept within 1 and 2^24). Powers
// of two only: scaling and unscaling change no bit of a finite float32 gradient.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace geodl {

class GradScaler {
 public:
  explicit GradScaler(double initial_scale = 65536.0, int growth_interval = 2000);

  double scale() const { return scale_; }
  // The loss, multiplied by the scale (backward of this gives the scaled gradients).
  torch::Tensor scaled(const torch::Tensor& loss) const { return loss * scale_; }
  // Divides the gradients of the optimizer's parameters by the scale; whether all are finite
  // (false: skip the optimizer's step). One wait for the device per call.
  bool unscale(torch::optim::Optimizer& optimizer) const;
  // After each step: halves the scale when the gradients were not finite, else counts
  // towards its doubling.
  void update(bool finite);
  int64_t skippedSteps() const { return skipped_; }

 private:
  double scale_;
  int growth_interval_;
  int good_steps_ = 0;
  int64_t skipped_ = 0;
};

}  // namespace geodl
