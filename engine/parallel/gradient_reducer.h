// The gradient all-reduce of data-parallel training (LibTorch's C++ frontend has no
// DistributedDataParallel): the parameters go into buckets of about `bucket_bytes`, in
// reverse order (backward produces the last layers' gradients first). A hook on each
// parameter copies its gradient into its bucket as backward produces it, and a bucket
// whose gradients are all in starts its all-reduce at once, while backward goes on; after
// backward, finish() waits for them and writes the averages into the gradients. A gradient
// that arrives twice in one backward (a parameter used twice) falls back to reducing the
// finished gradients, so the result is the average in every case.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "parallel/process_group.h"

namespace geodl {

class GradientReducer {
 public:
  GradientReducer(ProcessGroup& group, const std::vector<torch::Tensor>& parameters,
                  size_t bucket_bytes = size_t(2) << 20);
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // After backward: every parameter's gradient becomes the mean over the ranks.
  void finish();
  int buckets() const { return int(buckets_.size()); }
  // Buckets whose all-reduce had started before backward ended (overlap), over all steps.
  int64_t startedEarly() const { return started_early_; }
  int64_t reduced() const { return reduced_; }
  double waitSeconds() const { return wait_seconds_; }

 private:
  struct Bucket {
    std::vector<size_t> members;  // indices into parameters_
    std::vector<int64_t> offsets;
    torch::Tensor flat;
    int ready = 0;
    bool twice = false;
    ProcessGroup::Pending pending;
    bool started = false;
  };
  void onGradient(size_t parameter, const torch::Tensor& grad);
  void start(Bucket& bucket);

  ProcessGroup& group_;
  std::vector<torch::Tensor> parameters_;
  std::vector<size_t> bucket_of_;
  std::vector<Bucket> buckets_;
  bool in_finish_ = false;
  int64_t started_early_ = 0, reduced_ = 0;
  double wait_seconds_ = 0;
};

}  // namespace geodl
