#include "core/batch_probe.h"

#include <chrono>
#include <cmath>
#include <mutex>
#include <sstream>

#include "core/device.h"
#include "base/errors.h"
#include "base/hard_stop.h"
#include "core/memory.h"
#include "core/model_spec.h"
#include "core/models.h"
#include "core/train_step.h"

namespace geodl {

namespace {

// Measurements share process-wide counters: one at a time.
std::mutex g_probe_mutex;

constexpr double kMiB = 1024.0 * 1024.0;

void validate(const BatchProbeOptions& o) {
  if (o.sample_size < kMinSampleSize)
    throw InputError("the sample size must be at least " + std::to_string(kMinSampleSize) + " pixels (got " +
                     std::to_string(o.sample_size) + ")");
  if (!(o.budget_mib > 0)) throw InputError("the memory budget must be positive (MiB)");
  if (o.max_batch < 1) throw InputError("the batch limit must be at least 1");
}

void synchronize(const std::string& device) {
#ifdef GEODL_WITH_CUDA
  if (device.rfind("cuda", 0) == 0) torch::cuda::synchronize();
#endif
}

// Everything one measurement needs, built on the device under the meter.
class StepRunner {
 public:
  StepRunner(const BatchProbeOptions& o, MemoryMeter& meter, const std::string& device)
      : options_(o), device_(device) {
    meter.start();  // the model, gradients and optimizer state count
    ModelSpec spec = modelSpecFromName(o.model);
    spec.bands = o.bands;
    spec.classes = o.classes;
    spec.checkpoint = spec.checkpoint || o.checkpoint;
    fillPlaceholderWavelengths(spec);  // DOFA's memory does not depend on them
    model_ = makeModel(spec);
    model_->to(torch::Device(device));
    if (device.rfind("cuda", 0) == 0) toChannelsLast(*model_);  // as training keeps it on a GPU
    optimizer_ = std::make_unique<torch::optim::Adam>(model_->parameters(),
                                                      torch::optim::AdamOptions(1e-4));
  }

  // One step at `batch`; the batch is made here so that it counts too.
  double step(int batch) {
    auto options = torch::TensorOptions().device(device_);
    Batch b{torch::randn({batch, options_.bands, options_.sample_size, options_.sample_size},
                         options),
            torch::randint(0, options_.classes, {batch, options_.sample_size, options_.sample_size},
                           options.dtype(torch::kLong))};
    StepOptions step;
    step.autocast = autocastType(options_.precision);
    return trainStep(*model_, *optimizer_, b, step);
  }

  // Peak memory and wall time of one step at `batch`.
  StepMeasurement measure(int batch, MemoryMeter& meter) {
    meter.resetPeak();
    const auto t0 = std::chrono::steady_clock::now();
    step(batch);
    synchronize(device_);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return {batch, double(meter.peak()), seconds};
  }

 private:
  const BatchProbeOptions& options_;
  std::string device_;
  SegmentationModel model_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
};

bool isOutOfMemory(const c10::Error& e) {
  return dynamic_cast<const c10::OutOfMemoryError*>(&e) != nullptr ||
         std::string(e.what()).find("out of memory") != std::string::npos;
}

}  // namespace

StepMeasurement measureTrainingStep(const BatchProbeOptions& options, int batch, int repeats,
                                    Progress& progress) {
  validate(options);
  std::lock_guard<std::mutex> lock(g_probe_mutex);
  const std::string device = resolveDevice(options.device);
  configureThreads(options.threads);
  MemoryMeter meter(device);
  StepRunner runner(options, meter, device);
  progress.checkCancelled();
  const hard_stop::LoopScope loop;  // training steps
  runner.step(batch);  // warm-up: gradients and optimizer state now exist
  synchronize(device);
  meter.resetPeak();
  StepMeasurement total{batch, double(meter.peak()), 0.0};
  for (int r = 0; r < repeats; ++r) {
    progress.checkCancelled();
    progress.report(double(r + 1) / (repeats + 1), "step " + std::to_string(r + 1));
    const StepMeasurement m = runner.measure(batch, meter);
    total.peak_bytes = std::max(total.peak_bytes, m.peak_bytes);
    total.seconds += m.seconds;
  }
  progress.report(1.0, "");
  if (repeats > 0) total.seconds /= repeats;
  return total;
}

namespace {

// One step at `batch` with the budget enforced: whether it ran within it (the meter keeps its
// peak and the allocation it refused).
bool stepFits(StepRunner& runner, MemoryMeter& meter, int batch, size_t budget, const std::string& device) {
  meter.resetPeak();
  meter.setBudget(budget);
  try {
    runner.step(batch);
    synchronize(device);
  } catch (const c10::Error& e) {
    meter.setBudget(0);
    if (!isOutOfMemory(e)) throw;
    return false;
  }
  meter.setBudget(0);
  return !(meter.isCuda() && double(meter.peak()) > double(budget));
}

}  // namespace

BatchProbeResult probeMaxBatch(const BatchProbeOptions& options, Progress& progress) {
  validate(options);
  std::lock_guard<std::mutex> lock(g_probe_mutex);
  BatchProbeResult result;
  result.device = resolveDevice(options.device);
  result.threads = configureThreads(options.threads);
  const auto budget = static_cast<size_t>(options.budget_mib * kMiB);

  MemoryMeter meter(result.device);
  StepRunner runner(options, meter, result.device);
  progress.report(0.02, "warming up");
  // Gradients and optimizer state now exist. A batch of 2, as the measurements: BatchNorm
  // refuses one sample where a ResNet's deepest features are 1x1 (32 px samples).
  runner.step(2);

  // Memory is affine in the batch size: two small batches give the line. Batches of 2
  // and 4 rather than 1: some kernels take another path for a single sample.
  const int small[2] = {2, 4};
  for (int i = 0; i < 2; ++i) {
    progress.checkCancelled();
    progress.report(0.05 + 0.25 * i, "measuring batch " + std::to_string(small[i]));
    result.measurements.push_back(runner.measure(small[i], meter));
  }
  auto fit = [&](const StepMeasurement& a, const StepMeasurement& b) {
    result.bytes_per_sample = std::max(1.0, (b.peak_bytes - a.peak_bytes) / (b.batch - a.batch));
    result.fixed_bytes = std::max(0.0, a.peak_bytes - a.batch * result.bytes_per_sample);
    const double room = double(budget) - result.fixed_bytes;
    return std::min(options.max_batch, room <= 0 ? 0 : int(std::floor(room / result.bytes_per_sample)));
  };
  int predicted = fit(result.measurements[0], result.measurements[1]);
  // Tiny batches can take other kernels than large ones (below some sizes LibTorch skips
  // oneDNN): when the prediction is far above them, measure again at a quarter of it.
  if (predicted >= 32) {
    const int quarter = predicted / 4;
    progress.checkCancelled();
    progress.report(0.45, "measuring batch " + std::to_string(quarter));
    result.measurements.push_back(runner.measure(quarter, meter));
    predicted = fit(result.measurements[1], result.measurements[2]);
  }
  {
    std::ostringstream msg;
    msg << "per sample " << result.bytes_per_sample / kMiB << " MiB, fixed "
        << result.fixed_bytes / kMiB << " MiB: predicted max batch " << predicted;
    progress.log(msg.str());
  }
  result.max_batch = predicted;
  if (!options.confirm || predicted < 1) return result;

  // Confirm at the prediction with the budget enforced. Small batches can take other
  // kernels than large ones (oneDNN or not, other workspaces), so the line may be
  // optimistic: a refused step still tells how much it needed at least (its peak so far
  // plus the refused allocation), which gives a steeper line and a smaller batch.
  int batch = predicted;
  double slope = result.bytes_per_sample;
  int lowest_refused = 0;  // 0: none refused yet
  for (int attempt = 0; attempt < 16 && batch >= 1; ++attempt) {
    progress.checkCancelled();
    progress.report(0.6 + 0.03 * attempt, "confirming batch " + std::to_string(batch));
    const bool fits = stepFits(runner, meter, batch, budget, result.device);
    const double needed_at_least = double(meter.peak()) + double(meter.lastRefusedBytes());
    if (fits) {
      result.max_batch = batch;
      result.confirmed = true;
      progress.log("batch " + std::to_string(batch) + " fits");
      // Between this batch and the smallest refused one, halve the interval.
      if (lowest_refused == 0 || lowest_refused - batch <= 1) break;
      batch = (batch + lowest_refused) / 2;
      continue;
    }
    progress.log("batch " + std::to_string(batch) + " does not fit (needs more than " +
                 std::to_string(int64_t(needed_at_least / kMiB)) + " MiB)");
    lowest_refused = lowest_refused == 0 ? batch : std::min(lowest_refused, batch);
    if (result.confirmed) {
      batch = (result.max_batch + lowest_refused) / 2;
      if (batch <= result.max_batch) break;
      continue;
    }
    slope = std::max(slope * 1.01, (needed_at_least - result.fixed_bytes) / batch);
    const int next = int(std::floor((double(budget) - result.fixed_bytes) / slope));
    batch = std::min(batch - 1, next);
  }
  if (!result.confirmed) result.max_batch = std::max(0, batch);

  progress.report(1.0, "");
  return result;
}

}  // namespace geodl
