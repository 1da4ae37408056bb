// BatchNorm with the batch statistics of every rank of a data-parallel run (sync_batchnorm):
// the per-channel sums of the batch, and in backward those of the gradient, are summed over
// the ranks, so that 2 ranks with batch b normalize as 1 process with batch 2b does. The
// training job installs the summing (a collective) for the run; without it, BatchNorm uses
// each rank's own batch, as DistributedDataParallel does by default.
#pragma once

#include <torch/torch.h>

#include <tuple>

namespace geodl {

// Sums a tensor over the ranks, in place (every rank calls it in the same order).
class ChannelSum {
 public:
  virtual ~ChannelSum() = default;
  virtual void sum(torch::Tensor& values) = 0;
};

// The summing in force (null: per-rank statistics), installed for a scope.
ChannelSum* batchNormSync();
class BatchNormSyncScope {
 public:
  explicit BatchNormSyncScope(ChannelSum* sum);
  ~BatchNormSyncScope();
  BatchNormSyncScope(const BatchNormSyncScope&) = delete;
  BatchNormSyncScope& operator=(const BatchNormSyncScope&) = delete;

 private:
  ChannelSum* previous_;
};

// Training-mode BatchNorm of x (N, C, H, W) over all ranks' batches, with autograd; updates
// bn's running statistics (unbiased variance over all ranks' pixels) when `update_running`.
torch::Tensor syncBatchNorm(const torch::Tensor& x, torch::nn::BatchNorm2dImpl& bn, bool update_running = true);

// The global batch mean and 1/sqrt(var + eps) per channel, and the pixel count (no autograd).
std::tuple<torch::Tensor, torch::Tensor, double> syncBatchStatistics(const torch::Tensor& x, double eps);

// The gradients of input, weight and bias from the output's gradient g, given the global
// statistics: the input's gradient with the sums over all ranks, the parameters' from this
// rank's pixels (the gradient all-reduce averages them).
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> syncBatchNormBackward(
    const torch::Tensor& g, const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& mean,
    const torch::Tensor& invstd, double count);

}  // namespace geodl
