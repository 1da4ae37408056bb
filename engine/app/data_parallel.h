// Training with several processes (data parallelism on c10d): what the training job asks
// of the other ranks, in its own words. In one process every call is a no-op.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dist/world.h"

namespace geodl {

class ProcessGroup;
class GradientReducer;
class BatchNormSyncScope;
class ChannelSum;

class DataParallel {
 public:
  // Joins the other ranks of `world` (nothing to join in one process); throws IoError.
  DataParallel(const WorldInfo& world, double timeout_seconds);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  bool active() const { return bool(group_); }
  int rank() const { return world_.rank; }
  int size() const { return world_.size; }
  const WorldInfo& world() const { return world_; }
  // Only rank 0 writes the outputs and shows progress.
  bool writes() const { return world_.rank == 0; }

  // Runs `stage` on every rank; when it fails on any, it fails on all: a rank's own error
  // as it was, the others with the failing rank's message (so that no rank waits for one
  // that gave up).
  void together(const std::function<void()>& stage);
  // Refuses to go on when another rank's description of the run (JSON: the options, the
  // model, the stores, the version) differs from rank 0's, naming the rank and the key.
  void checkSameRun(const std::string& description);
  int64_t rankZeroValue(int64_t value);
  int64_t minimum(int64_t value);
  // Rank 0's parameters and buffers, on every rank.
  void broadcastModel(torch::nn::Module& model);
  // Rank 0's buffers (BatchNorm's running statistics, which each rank updated from its own
  // batches) on every rank, as DistributedDataParallel does: before validation.
  void broadcastBuffers(torch::nn::Module& model);
  // BatchNorm's batch statistics summed over the ranks while the returned scope lives
  // (null in one process).
  std::unique_ptr<BatchNormSyncScope> syncBatchNorm();
  // Gradient averaging for `model` from now on (call reduceGradients() after backward).
  void attach(torch::nn::Module& model);
  void reduceGradients();
  double reduceSeconds() const;
  // Sums, in place, over the ranks.
  void sum(std::vector<double>& values);
  void sum(std::vector<int64_t>& values);
  bool anyCancelled(bool cancelled);
  // Refuses to go on when the weights' digests differ between ranks after an epoch.
  void checkSameWeights(const std::string& digest, int epoch);

 private:
  WorldInfo world_;
  std::unique_ptr<ProcessGroup> group_;
  std::unique_ptr<GradientReducer> reducer_;
  std::unique_ptr<ChannelSum> channel_sum_;
};

}  // namespace geodl
