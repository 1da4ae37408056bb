#include "core/grad_scaler.h"

#include <algorithm>

namespace geodl {

GradScaler::GradScaler(double initial_scale, int growth_interval)
    : scale_(initial_scale), growth_interval_(std::max(1, growth_interval)) {}

bool GradScaler::unscale(torch::optim::Optimizer& optimizer) const {
  const double inverse = 1.0 / scale_;
  torch::Tensor not_finite;  // on the gradients' device: one wait, at the end
  for (auto& group : optimizer.param_groups())
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto g = p.grad();
      g.mul_(inverse);
      const auto bad = g.isfinite().logical_not().any();
      not_finite = not_finite.defined() ? not_finite.logical_or(bad) : bad;
    }
  return !not_finite.defined() || !not_finite.item<bool>();
}

void GradScaler::update(bool finite) {
  if (!finite) {
    scale_ = std::max(scale_ * 0.5, 1.0);
    good_steps_ = 0;
    ++skipped_;
    return;
  }
  if (++good_steps_ >= growth_interval_) {
    scale_ = std::min(scale_ * 2.0, 16777216.0);  // 2^24: beyond it float16 gains nothing
    good_steps_ = 0;
  }
}

}  // namespace geodl
