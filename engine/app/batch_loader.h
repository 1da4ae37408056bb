// Batches for training and validation, prepared by background threads while the model
// computes: read from a sample store, normalized, augmented, in a fixed order per epoch.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/augment.h"
#include "core/train_step.h"

namespace geodl {

struct LoaderOptions {
  std::string store;
  int64_t samples = 0;           // uses samples 0 .. samples-1 of the store
  int batch_size = 1;            // the last batch of an epoch may be smaller
  std::vector<double> mean, std;  // per band
  Augmentation augmentation;
  int num_classes = 1;           // labels must be below it, or equal to ignore_index
  int ignore_index = 255;
  uint64_t seed = 0;
  bool shuffle = false;          // a new order every epoch (from seed and epoch)
  int threads = 2;
  int prefetch = 3;              // batches prepared ahead of the one being used
  bool pin_memory = false;       // page-locked batches (faster copies to a GPU)
  // Data-parallel training: this process takes batches b with b % world_size == rank.
  int rank = 0;
  int world_size = 1;
  // Every rank takes the same number of batches (total / world_size; the rest are left for
  // the epoch): training steps are collectives, so no rank may take one more.
  bool equal_shares = false;
  // A last batch of a single sample is left out of the epoch (training: BatchNorm needs
  // two values per channel, and one sample's statistics are noise). The order changes
  // every epoch, so another sample waits each time.
  bool drop_single = false;
};

class BatchLoader {
 public:
  explicit BatchLoader(const LoaderOptions& options);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  int64_t batchesPerEpoch() const;
  // Whether each epoch leaves out a last batch of a single sample (drop_single).
  bool leavesOutASample() const;
  // Starts preparing epoch `epoch` (0-based): its order and augmentations depend only on
  // (seed, epoch, sample), never on which thread prepares what.
  void startEpoch(int epoch);
  // The next batch of the epoch (on the CPU); false at its end. Adds the seconds spent
  // waiting for it to *waited. Rethrows a worker's error (e.g. a label out of range).
  bool next(Batch& batch, double* waited = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace geodl
