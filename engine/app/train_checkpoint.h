// The training checkpoint (last_checkpoint.pt): a GeoDL model file that also holds the run's
// state (epochs so far, seed, batch size, best metric) and the optimizer's state, so that --resume
// continues exactly where the run stopped.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "app/train_result.h"
#include "core/models.h"
#include "model/model_file.h"

namespace geodl {

struct RunState {
  int64_t seed = 0;
  int batch_size = 0;
  double best = 0;  // the best value of the best metric so far
  int best_epoch = 0;
  int since_best = 0;
  std::string optimizer = "adam";  // whose state the checkpoint holds (before: always Adam's)
  // The learning rate of each of the optimizer's groups when saved: LibTorch's load() keeps
  // the rates the optimizer was built with, and the digest covers them (older checkpoints:
  // one group at the last epoch's rate, which the step schedule kept for the whole epoch).
  std::vector<double> optimizer_lrs;
  std::vector<EpochRecord> epochs;
};

struct Checkpoint {
  RunState state;
  std::unique_ptr<LoadedModel> model;
  torch::serialize::InputArchive optimizer;
  std::string optimizer_digest;  // empty in checkpoints from before digests
};

// Reads a checkpoint once: weights, metadata, run state and the optimizer's state. Throws InputError
// for a model file that is not a checkpoint.
Checkpoint loadCheckpoint(const std::string& path);

// Writes the checkpoint atomically (see saveModelFile).
void saveCheckpoint(const std::string& path, const ModelInfo& info, SegmentationModelImpl& model,
                    torch::optim::Optimizer& optimizer, const RunState& state);

// Copies the checkpoint's weights, buffers and the optimizer's state into a model on `device`;
// throws InputError when that state differs from the checkpoint's digest (damaged).
void restoreCheckpoint(Checkpoint& checkpoint, SegmentationModelImpl& model, torch::optim::Optimizer& optimizer,
                       const torch::Device& device);

// The metrics as the model file's JSON keeps them.
std::string metricsJson(const SegmentationMetrics& metrics);

}  // namespace geodl
