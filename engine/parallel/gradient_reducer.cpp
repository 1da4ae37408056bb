#include "parallel/gradient_reducer.h"

#include <chrono>

namespace geodl {

GradientReducer::GradientReducer(ProcessGroup& group, const std::vector<torch::Tensor>& parameters,
                                 size_t bucket_bytes)
    : group_(group), parameters_(parameters), bucket_of_(parameters.size()) {
  size_t bytes = bucket_bytes;
  for (size_t k = parameters_.size(); k-- > 0;) {
    const torch::Tensor& p = parameters_[k];
    const size_t size = size_t(p.numel()) * p.element_size();
    if (buckets_.empty() || bytes + size > bucket_bytes) {
      buckets_.emplace_back();
      bytes = 0;
    }
    Bucket& b = buckets_.back();
    b.offsets.push_back(b.members.empty() ? 0 : b.offsets.back() + parameters_[b.members.back()].numel());
    b.members.push_back(k);
    bucket_of_[k] = buckets_.size() - 1;
    bytes += size;
  }
  for (Bucket& b : buckets_) {
    const torch::Tensor& last = parameters_[b.members.back()];
    b.flat = torch::zeros({b.offsets.back() + last.numel()}, last.options().requires_grad(false));
  }
  for (size_t k = 0; k < parameters_.size(); ++k)
    parameters_[k].register_hook([this, k](torch::Tensor grad) {
      onGradient(k, grad);
      return torch::Tensor();  // the gradient itself is unchanged
    });
}

void GradientReducer::onGradient(size_t parameter, const torch::Tensor& grad) {
  Bucket& b = buckets_[bucket_of_[parameter]];
  if (b.started || b.twice) {  // a second gradient for one parameter: reduce at the end instead
    b.twice = true;
    return;
  }
  size_t slot = 0;
  while (b.members[slot] != parameter) ++slot;
  torch::NoGradGuard no_grad;
  b.flat.narrow(0, b.offsets[slot], grad.numel()).copy_(grad.reshape({-1}));
  if (++b.ready == int(b.members.size())) {
    if (!in_finish_) ++started_early_;
    start(b);
  }
}

void GradientReducer::start(Bucket& b) {
  std::vector<torch::Tensor> one = {b.flat};
  b.pending = group_.allreduceSumAsync(one);
  b.started = true;
}

void GradientReducer::finish() {
  in_finish_ = true;
  torch::NoGradGuard no_grad;
  const auto t0 = std::chrono::steady_clock::now();
  for (Bucket& b : buckets_) {
    if (b.started && !b.twice) continue;
    if (b.started) b.pending.wait();  // a stale sum: redone from the finished gradients
    for (size_t slot = 0; slot < b.members.size(); ++slot) {
      const torch::Tensor& p = parameters_[b.members[slot]];
      auto view = b.flat.narrow(0, b.offsets[slot], p.numel());
      if (p.grad().defined()) view.copy_(p.grad().reshape({-1}));
      else view.zero_();
    }
    start(b);
  }
  const double scale = 1.0 / group_.size();
  for (Bucket& b : buckets_) {
    b.pending.wait();
    b.flat.mul_(scale);
    for (size_t slot = 0; slot < b.members.size(); ++slot) {
      torch::Tensor p = parameters_[b.members[slot]];
      auto view = b.flat.narrow(0, b.offsets[slot], p.numel()).view(p.sizes());
      if (p.grad().defined()) p.mutable_grad().copy_(view);
      else p.mutable_grad() = view.clone();
    }
    b.ready = 0;
    b.started = b.twice = false;
    ++reduced_;
  }
  wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  in_finish_ = false;
}

}  // namespace geodl
