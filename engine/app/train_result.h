// What a training run did, epoch by epoch: what train() returns and the report shows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/metrics.h"

namespace geodl {

struct EpochRecord {
  int epoch = 0;  // 1-based
  double learning_rate = 0;
  double train_loss = 0, val_loss = 0;
  SegmentationMetrics val;
  double seconds = 0;        // the whole epoch, validation included
  double data_wait = 0;      // training time spent waiting for batches
  double forward = 0, backward = 0, optimizer = 0, validation = 0;
  double samples_per_second = 0;  // training samples / training time (data waits included)
};

struct TrainResult {
  std::string model;        // the architecture's name
  int epochs_planned = 0;   // num_epochs
  std::string best_metric;  // loss or miou
  std::string model_path, checkpoint_path, csv_path, report_path;
  std::string device;
  std::string precision = "fp32";  // fp32, or bf16 or fp16 (autocast)
  int threads = 0;
  int batch_size = 0;              // per rank
  int world_size = 1;              // processes training together (global batch: batch_size x world_size)
  bool batch_size_probed = false;
  bool checkpointing = false;      // gradient checkpointing (asked, implied by the model, or automatic)
  int64_t train_samples = 0, val_samples = 0;
  int64_t seed = 0;
  int first_epoch = 1;  // > 1 after --resume
  int best_epoch = 0;
  bool stopped_early = false;
  std::vector<std::string> class_names;
  std::string loss = "cross_entropy", optimizer = "adam", scheduler = "step";  // as the options name them
  std::vector<std::string> class_colours;  // "#rrggbb", the model's (as its class rasters are styled)
  std::vector<EpochRecord> epochs;  // every epoch, those before a resume included
  // The best epoch's record; null when no epoch ran.
  const EpochRecord* best() const {
    for (const auto& r : epochs)
      if (r.epoch == best_epoch) return &r;
    return nullptr;
  }
};

}  // namespace geodl
