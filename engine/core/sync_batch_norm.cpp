#include "core/sync_batch_norm.h"

namespace geodl {

namespace {

ChannelSum* g_sync = nullptr;

torch::Tensor perChannel(const torch::Tensor& t) { return t.view({1, -1, 1, 1}); }

struct SyncBatchNormFunction : torch::autograd::Function<SyncBatchNormFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias, torch::nn::BatchNorm2dImpl* bn,
                               bool update_running) {
    auto [mean, invstd, count] = syncBatchStatistics(x, bn->options.eps());
    if (update_running && bn->running_mean.defined()) {
      torch::NoGradGuard no_grad;
      const double m = bn->options.momentum().value_or(0.1);
      const auto var = (1.0 / (invstd * invstd) - bn->options.eps()) * (count / std::max(count - 1.0, 1.0));
      bn->running_mean.mul_(1 - m).add_(mean.to(bn->running_mean.dtype()), m);
      bn->running_var.mul_(1 - m).add_(var.to(bn->running_var.dtype()), m);
      if (bn->num_batches_tracked.defined()) bn->num_batches_tracked.add_(1);
    }
    ctx->save_for_backward({x, weight, mean, invstd});
    ctx->saved_data["count"] = count;
    return (x - perChannel(mean)) * perChannel(invstd * weight) + perChannel(bias);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    auto [gx, gw, gb] = syncBatchNormBackward(grads[0], saved[0], saved[1], saved[2], saved[3],
                                              ctx->saved_data["count"].toDouble());
    return {gx, gw, gb, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

ChannelSum* batchNormSync() { return g_sync; }

BatchNormSyncScope::BatchNormSyncScope(ChannelSum* sum) : previous_(g_sync) { g_sync = sum; }
BatchNormSyncScope::~BatchNormSyncScope() { g_sync = previous_; }

std::tuple<torch::Tensor, torch::Tensor, double> syncBatchStatistics(const torch::Tensor& x, double eps) {
  torch::NoGradGuard no_grad;
  const int64_t channels = x.size(1);
  const auto xd = x.detach();
  // Sums in double: the variance is a difference of them.
  auto sums = torch::cat({xd.sum({0, 2, 3}, false, torch::kDouble), xd.square().sum({0, 2, 3}, false, torch::kDouble),
                          torch::full({1}, double(x.numel() / channels), torch::kDouble)});
  if (g_sync) g_sync->sum(sums);
  const double count = sums[2 * channels].item<double>();
  const auto mean = sums.narrow(0, 0, channels) / count;
  const auto var = (sums.narrow(0, channels, channels) / count - mean * mean).clamp_min(0.0);
  return {mean.to(x.scalar_type()), (var + eps).rsqrt().to(x.scalar_type()), count};
}

std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> syncBatchNormBackward(
    const torch::Tensor& g, const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& mean,
    const torch::Tensor& invstd, double count) {
  torch::NoGradGuard no_grad;
  const int64_t channels = x.size(1);
  const auto xmu = x - perChannel(mean);
  const auto local_dy = g.sum({0, 2, 3}, false, torch::kDouble);
  const auto local_dy_xmu = (g * xmu).sum({0, 2, 3}, false, torch::kDouble);
  auto sums = torch::cat({local_dy, local_dy_xmu});
  if (g_sync) g_sync->sum(sums);
  const auto mean_dy = (sums.narrow(0, 0, channels) / count).to(x.scalar_type());
  const auto mean_dy_xmu = (sums.narrow(0, channels, channels) / count).to(x.scalar_type());
  const auto gx = (g - perChannel(mean_dy) - xmu * perChannel(invstd * invstd * mean_dy_xmu)) *
                  perChannel(invstd * weight);
  const auto gw = (local_dy_xmu.to(x.scalar_type()) * invstd);
  const auto gb = local_dy.to(x.scalar_type());
  return {gx, gw, gb};
}

torch::Tensor syncBatchNorm(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& bn, bool update_running) {
  return SyncBatchNormFunction::apply(x, bn.weight, bn.bias, &bn, update_running);
}

}  // namespace geodl
