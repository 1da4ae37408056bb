// The processes of a data-parallel job, joined on LibTorch's c10d: a TCPStore (hosted by
// rank 0, or by torchrun's agent) and a Gloo process group, or NCCL's on GPUs (GeoDL's CUDA
// build). Collectives turn c10d's errors
// (a rank that died, a timeout) into IoErrors that say which and what to do.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/sync_batch_norm.h"
#include "parallel/backend.h"
#include "parallel/world.h"

namespace geodl {

class ProcessGroup {
 public:
  // Connects to the other ranks within `timeout` (also every collective's limit). Throws
  // IoError naming the address and port when it cannot (a port in use, an unreachable
  // MASTER_ADDR, a rank that never came). `advice`, asked when a rank is lost, ends its
  // message: what the user can do then (training: continue with --resume, once an epoch ended).
  // `backend` (auto, gloo, nccl) and `device` go through resolveBackend; with NCCL the
  // collectives take tensors on `device`, the GPU of this rank.
  ProcessGroup(const WorldInfo& world, std::chrono::milliseconds timeout, std::function<std::string()> advice,
               const std::string& backend = "gloo", const std::string& device = "cpu");
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return world_.rank; }
  int size() const { return world_.size; }
  const WorldInfo& world() const { return world_; }

  // An all-reduce (sum) started now; wait() blocks until it is done.
  class Pending {
   public:
    Pending();
    ~Pending();
    Pending(Pending&&) noexcept;
    Pending& operator=(Pending&&) noexcept;
    void wait();

   private:
    friend class ProcessGroup;
    struct Impl;
    std::unique_ptr<Impl> impl_;
  };
  Pending allreduceSumAsync(std::vector<torch::Tensor>& tensors);
  void allreduceSum(std::vector<torch::Tensor>& tensors);  // in place
  void broadcast(std::vector<torch::Tensor>& tensors, int root = 0);
  // Every rank's text, in rank order (through the store).
  std::vector<std::string> allgatherText(const std::string& text);
  bool any(bool flag);
  int64_t minimum(int64_t value);
  int64_t broadcastValue(int64_t value, int root = 0);

  // The store itself, for ranks that work at their own pace (classification, samples) and
  // must not wait in a collective while another still works: a counter (add 0 reads it),
  // a text, and whether a text was set. IoError when the store cannot be reached.
  int64_t add(const std::string& key, int64_t delta);
  void setText(const std::string& key, const std::string& text);
  std::string text(const std::string& key);
  bool has(const std::string& key);
  // How many heartbeats rank r sent (one a second while it lives).
  int64_t heartbeats(int r);
  std::chrono::milliseconds timeout() const;
  const std::string& backend() const;  // gloo or nccl
  // Where tensors given to the collectives must be (the CPU with Gloo, the rank's GPU with NCCL).
  torch::Device device() const;

 private:
  [[noreturn]] void lost(const std::string& what, const std::exception& e) const;
  std::string lostRanks() const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  WorldInfo world_;
  std::function<std::string()> advice_;
  int64_t gathers_ = 0;
};

// BatchNorm's per-channel sums over the group's ranks (for sync_batchnorm).
class GroupChannelSum : public ChannelSum {
 public:
  explicit GroupChannelSum(ProcessGroup& group) : group_(group) {}
  void sum(torch::Tensor& values) override {
    std::vector<torch::Tensor> one = {values};
    group_.allreduceSum(one);
  }

 private:
  ProcessGroup& group_;
};

}  // namespace geodl
