// A job with several processes on c10d: what training (data parallelism), classification
// and samples (shared windows) ask of the other ranks, in their own words. In one process
// every call is a no-op.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "app/options.h"
#include "base/progress.h"
#include "parallel/world.h"

namespace geodl {

class ProcessGroup;
class GradientReducer;
class BatchNormSyncScope;
class ChannelSum;

class DataParallel {
 public:
  // Joins the other ranks of `world` (nothing to join in one process); throws IoError.
  // `advice` ends the message when a rank is lost: what the user can do then. `backend`
  // (auto, gloo, nccl) for a run on `device` (resolved): resolveBackend (parallel/process_group.h).
  DataParallel(const WorldInfo& world, double timeout_seconds, std::function<std::string()> advice,
               const std::string& backend = "gloo", const std::string& device = "cpu");
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  bool active() const { return bool(group_); }
  std::string backend() const;  // gloo or nccl; empty in one process
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
  // model, the stores, the version) differs from rank 0's, naming the rank and the key;
  // `what`: "train another run", "classify another job".
  void checkSameRun(const std::string& description, const std::string& what = "train another run");
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

  // Jobs whose ranks work at their own pace (classification, samples), where no rank may
  // wait in a collective for one still at work (the collective's timeout would fire):
  // Runs `work`; when it throws, the others learn it (reportFailure) before it goes on.
  void guarded(const std::function<void()>& work);
  // This rank failed: the others stop at their next check, with its message (a cancel
  // stops them as cancelled).
  void reportFailure(const std::string& message, bool cancelled) noexcept;
  // Throws when another rank reported a failure (its message; Cancelled for a cancel) or,
  // watched by rank 0, stopped its heartbeat for the collective timeout. Asks the store at
  // most 5 times a second.
  void checkOthers();
  // Marks this rank past `stage`, then waits until every rank is, checking the others and
  // calling `tick` (progress) 5 times a second.
  void awaitAll(const std::string& stage, const std::function<void()>& tick = {});
  // Every rank's text, in rank order (the ranks at the same point).
  std::vector<std::string> gatherText(const std::string& text);
  // A counter every rank adds to (delta 0 reads it).
  int64_t addToCounter(const std::string& key, int64_t delta);
  // Waits until every rank is here (a collective: the ranks at the same point).
  void barrier();

 private:
  void watchHeartbeats();
  WorldInfo world_;
  std::unique_ptr<ProcessGroup> group_;
  std::unique_ptr<GradientReducer> reducer_;
  std::unique_ptr<ChannelSum> channel_sum_;
  // checkOthers(): when it last asked, and each rank's heartbeats when they last changed.
  std::chrono::steady_clock::time_point checked_{}, watched_{};
  std::vector<int64_t> beats_;
  std::vector<std::chrono::steady_clock::time_point> beat_changed_;
};

// The progress of a job shared by ranks, in units every rank counts alike (windows,
// pixels): rank 0 shows the whole job's (the units done on every rank, through the store),
// the others their own; cancelled when this rank's user cancels, and checking the other
// ranks (a failure there throws here). In one process: the parent's progress as it is.
class RankProgress final : public Progress {
 public:
  // `counter`: the units' name, then ':' and what makes it unique in the job ("windows:
  // OUTPUT"); `total`: the job's units on all ranks; `mine`: this rank's share of them.
  RankProgress(Progress& parent, DataParallel& ranks, std::string counter, int64_t total, int64_t mine);
  void report(double fraction, const std::string& message) override;  // of this rank's share
  bool cancelled() const override;
  void log(const std::string& message) override { parent_.log(message); }
  // Rank 0 waiting for the others: the job's progress meanwhile. Publishes what is left of
  // this rank's share first.
  void showJob();

 private:
  void publish(bool now);
  Progress& parent_;
  DataParallel& ranks_;
  std::string counter_;
  int64_t total_, mine_, done_ = 0, published_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

// How the `geodl` command starts the processes of a job itself (torchrun and srun start them
// instead, and say so in the environment: see parallel/world.h).
struct LaunchOptions {
  int nproc = 1;  // processes on this machine sharing the job, each with cores / nproc threads
};

// The options of the launch: the same for every job.
const OptionTable<LaunchOptions>& launchOptionTable();

}  // namespace geodl
