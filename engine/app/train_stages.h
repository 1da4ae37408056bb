// The stages of train() (app/train.h), one file each, for train.cpp and the files beside it;
// not part of the job's interface:
//   1. planning (train_plan.cpp): everything checked, the output files named, nothing written;
//   2. building (train_build.cpp): the model at its first weights, its normalization and loss,
//      the loaders, with the batch size and checkpointing from memory (train_memory.cpp);
//   3. the optimizer and its schedule (train_optimizer.cpp);
//   4. the epochs (train.cpp), each recorded in the model file (train_record.cpp).
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "app/batch_loader.h"
#include "app/data_parallel.h"
#include "app/train.h"
#include "app/train_checkpoint.h"
#include "base/atomic_file.h"
#include "base/output_lock.h"
#include "base/progress.h"
#include "core/batch_probe.h"
#include "core/losses.h"
#include "core/lr_schedule.h"
#include "core/models.h"
#include "io/sample_store.h"
#include "model/model_info.h"

namespace geodl {

// Throws InputError with `message` unless `ok`.
void checkInput(bool ok, const std::string& message);

// "0.1235" for (0.12345, 4): figures in the log.
std::string fixedText(double value, int digits);

// What the run will be, checked before the first step: the model, the stores, the device.
struct TrainPlan {
  ModelSpec spec;  // bands and classes from the stores
  io::StoreContents trn, val;
  int64_t n_trn = 0, n_val = 0;
  std::string device_name;
  bool on_gpu = false;
  std::string precision = "fp32";  // resolved: fp32, or bf16 or fp16 (autocast)
};

// 1. Planning (train_plan.cpp).
// Everything checked (the options by their table, the stores, the weights files), the output
// files named in `result`; creates the output folders and locks the outputs (for the locks'
// life) when `writes` (rank 0), nothing else.
TrainPlan planTraining(const TrainOptions& options, TrainResult& result, OutputFolders& folders, OutputLocks& locks,
                       bool writes, Progress& progress);
// The checkpoint of the run being resumed (none without --resume), checked against the plan.
std::unique_ptr<Checkpoint> resumedCheckpoint(const TrainOptions& options, const TrainPlan& plan,
                                              const TrainResult& result);

// 2. Building (train_build.cpp), with the memory decisions (train_memory.cpp).
struct BuiltRun {
  SegmentationModel model;  // at its initial weights, checkpointing set
  LossOptions loss;
  std::unique_ptr<BatchLoader> train_loader, val_loader;
  ModelInfo info;        // what the model file says of the model
  nlohmann::json record;  // the training record the model file keeps
};
// The threads, the seed, the model, its normalization and loss, the batch size and
// checkpointing (the smallest of all ranks'), the loaders; checks that every rank builds the
// same run. Fills result's threads, seed, batch size and checkpointing.
BuiltRun buildRun(const TrainOptions& options, TrainPlan& plan, const Checkpoint* resumed, TrainResult& result,
                  DataParallel& ranks, Progress& progress);
// The batch size: the checkpoint's when resuming, the one asked for, or the largest that fits.
int chooseBatchSize(const TrainOptions& options, const TrainPlan& plan, const Checkpoint* resumed,
                    TrainResult& result, Progress& progress);
// checkpoint auto: on only when the batch would not fit the memory budget without it.
bool chooseCheckpointing(const TrainOptions& options, const TrainPlan& plan, const TrainResult& result,
                         Progress& progress);

// 3. The optimizer and its schedule (train_optimizer.cpp).
std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const TrainOptions& options, SegmentationModelImpl& model);
// The encoder group's share of the schedule's rate in `epoch` (1-based): 0 while frozen.
double encoderRate(const TrainOptions& options, int epoch);
// The learning-rate schedule of the run, with `steps_per_epoch` optimizer steps an epoch.
Schedule learningRateSchedule(const TrainOptions& options, int64_t steps_per_epoch);
// The run's state at its start: a new run's, or the resumed checkpoint's restored into the
// model and optimizer (on `device`).
RunState startState(const TrainOptions& options, Checkpoint* resumed, TrainResult& result,
                    SegmentationModelImpl& model, torch::optim::Optimizer& optimizer, const torch::Device& device,
                    Progress& progress);

// The training samples' bands: the normalization (input = (pixel - mean) / stdev) and the
// value range, which the model file keeps for classification to compare imagery with.
struct TrainingBands {
  std::vector<double> mean, stdev, minimum, maximum;
};

// 4. The record (train_record.cpp).
// The training options as the model file keeps them: every option of the table that holds a
// value, by its name and typed as its option, with the pretrained encoder's digest and the
// config as given.
nlohmann::json optionsToJson(const TrainOptions& options);
// The options and what the run made of them (batch, seed, samples, ranks).
nlohmann::json trainingRecord(const TrainOptions& options, const TrainPlan& plan, const TrainResult& result,
                              int world_size);
// What the model file says of the model: everything classification needs.
ModelInfo describeModel(const TrainOptions& options, const TrainPlan& plan, const TrainingBands& bands,
                        TrainResult& result);
// The current time as the model file writes it: 2026-12-02T16:00:00Z.
std::string utcNow();

}  // namespace geodl
