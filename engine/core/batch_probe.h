// The batch-size question: the largest batch whose training step fits a memory budget.
#pragma once

#include <string>
#include <vector>

#include "base/progress.h"
#include "core/device.h"

namespace geodl {

// The largest batch the option tables accept, and the probe predicts.
constexpr int kMaxBatchSize = 100000;

struct BatchProbeOptions {
  std::string model = "unetsmall";  // any name of modelNames()
  int sample_size = 256;
  int bands = 3;
  int classes = 5;
  bool checkpoint = false;  // on top of what the model name implies
  std::string precision = "fp32";  // resolved (resolvePrecision): bf16 and fp16 step under autocast
  double budget_mib = 4096;
  std::string device = kAutomaticDevice;
  int threads = 0;        // 0: all cores
  bool confirm = true;    // run one step at the predicted batch under the budget
  int max_batch = kMaxBatchSize;  // never predict beyond this
};

struct StepMeasurement {
  int batch = 0;
  double peak_bytes = 0;  // forward, backward and optimizer step, model and batch included
  double seconds = 0;
};

struct BatchProbeResult {
  int max_batch = 0;            // 0: not even one sample fits
  double bytes_per_sample = 0;  // slope of peak memory against batch size
  double fixed_bytes = 0;       // model, gradients, optimizer state
  bool confirmed = false;       // a step at max_batch ran under the budget
  std::string device;
  int threads = 0;
  std::vector<StepMeasurement> measurements;
};

// Measures the training-step peak at two small batches (memory is affine in the batch
// size), predicts the largest batch under the budget and, when asked, confirms it by
// running a step there with the budget enforced, stepping down if it does not fit.
BatchProbeResult probeMaxBatch(const BatchProbeOptions& options, Progress& progress);

// Peak memory and wall time of `repeats` training steps at `batch` (after one warm-up
// step that creates the gradients and optimizer state).
StepMeasurement measureTrainingStep(const BatchProbeOptions& options, int batch, int repeats,
                                    Progress& progress);

}  // namespace geodl
