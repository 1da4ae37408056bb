// The training job (app/train.h): its stages in order, and the epochs. The stages before the
// epochs are in the files beside this one (see app/train_stages.h).
#include "app/train.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <functional>
#include <iomanip>
#include <sstream>

#include "app/train_report.h"
#include "app/train_stages.h"
#include "base/hard_stop.h"
#include "base/atomic_file.h"
#include "base/errors.h"
#include "core/device.h"
#include "core/memory.h"
#include "core/metrics.h"
#include "core/sync_batch_norm.h"
#include "core/train_step.h"
#include "model/model_file.h"
#include "parallel/backend.h"

namespace geodl {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string fixedText(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

namespace {

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Whether `value` of the chosen metric improves on `best`.
bool improves(const std::string& metric, double value, double best) {
  return metric == "loss" ? value < best : value > best;
}

double metricOf(const std::string& metric, const EpochRecord& r) {
  return metric == "loss" ? r.val_loss : r.val.mean_iou;
}

struct ValidationResult {
  double loss = 0;
  SegmentationMetrics metrics;
};

ValidationResult validateEpoch(SegmentationModelImpl& model, BatchLoader& loader, int epoch,
                               const LossOptions& loss, const torch::Device& device, at::ScalarType autocast_type,
                               int classes, int ignore_index, DataParallel& ranks, Progress& progress,
                               const std::function<void(int64_t)>& on_batch) {
  model.eval();
  torch::NoGradGuard no_grad;
  ConfusionMatrix confusion(classes, ignore_index);
  double loss_sum = 0;
  int64_t samples = 0, done = 0;
  loader.startEpoch(epoch);
  Batch batch;
  while (loader.next(batch)) {
    if (!ranks.active()) progress.checkCancelled();  // with ranks: at the next training batch, together
    auto images = batch.images.to(device, true);
    auto labels = batch.labels.to(device, true);
    torch::Tensor logits;
    {
      Autocast autocast(autocast_type, device);
      logits = model.forward(images);
    }
    // The mean over counted pixels of a batch with nothing counted is NaN: skip those.
    const double value = segmentationLoss(logits, labels, loss).item<double>();
    if (std::isfinite(value)) {
      loss_sum += value * double(images.size(0));
      samples += images.size(0);
    }
    confusion.update(logits.argmax(1), labels);
    on_batch(++done);
  }
  // Each rank validated its share: the sums are the whole set's (the counts exactly).
  std::vector<double> sums = {loss_sum, double(samples)};
  ranks.sum(sums);
  ranks.sum(confusion.counts());
  return {sums[1] > 0 ? sums[0] / sums[1] : 0.0, confusion.metrics()};
}

// One epoch's training pass: the record's losses, timings and speed.
// A step that runs out of memory is retried in parts (trainStepFitting), said in the log.
void trainEpoch(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer, BatchLoader& loader,
                StepOptions& step, const torch::Device& device, DataParallel& ranks, EpochRecord& r,
                const std::function<void(int64_t)>& before_batch, const std::function<void(int64_t, double)>& on_batch,
                Progress& progress, const std::string& advice) {
  StepTimings timings;
  step.timings = &timings;
  const auto start = Clock::now();
  loader.startEpoch(r.epoch - 1);
  double loss_sum = 0;
  int64_t samples = 0, b = 0;
  // On a GPU the next batch (pinned by the loader) is copied while the current step runs:
  // its copy is queued, without waiting, before the step's work.
  Batch batch, next_on_device;
  bool more = true;
  const auto fetch = [&] {
    more = loader.next(batch, &r.data_wait);
    if (more) next_on_device = {batch.images.to(device, true), batch.labels.to(device, true)};
  };
  fetch();
  while (more) {
    const Batch on_device = next_on_device;
    if (device.is_cuda()) fetch();
    before_batch(b);
    const int64_t n = on_device.images.size(0);
    const auto where = [&] {  // built only when memory runs out
      return "out of " + std::string(device.is_cuda() ? "GPU" : "CPU") + " memory at batch " + std::to_string(b + 1) +
             " of epoch " + std::to_string(r.epoch) + " (" + std::to_string(n) + " samples";
    };
    double value = 0;
    try {
      value = trainStepFitting(model, optimizer, on_device, step, [&](int parts) {
        progress.log(where() + "): the batch is computed again in " + std::to_string(parts) + " parts of about " +
                     std::to_string((n + parts - 1) / parts) +
                     " samples, their gradients added up (the optimizer steps on the whole batch), and so are the "
                     "batches after it");
      });
    } catch (const c10::OutOfMemoryError& e) {
      const std::string what = e.what();
      throw InputError(where() + (step.parts > 1 ? ", in " + std::to_string(step.parts) + " parts" : std::string()) +
                       (ranks.active() ? ", on rank " + std::to_string(ranks.rank()) + " of " + std::to_string(ranks.size())
                                       : std::string()) +
                       ": " + what.substr(0, what.find('\n')) + "); give a smaller batch_size or checkpoint true; " +
                       advice);
    }
    if (!std::isfinite(value))
      throw Error("the training loss became " + std::to_string(value) + " at epoch " + std::to_string(r.epoch) +
                  "; lower learning_rate");
    loss_sum += value * double(n);
    samples += n;
    on_batch(++b, loss_sum / double(samples));
    if (!device.is_cuda()) fetch();
  }
  std::vector<double> sums = {loss_sum, double(samples)};
  ranks.sum(sums);  // the loss and speed of all ranks together
  loss_sum = sums[0];
  samples = int64_t(sums[1]);
  const double seconds = since(start);
  r.train_loss = loss_sum / double(std::max<int64_t>(samples, 1));
  r.forward = timings.forward;
  r.backward = timings.backward;
  r.optimizer = timings.optimizer;
  r.samples_per_second = double(samples) / std::max(seconds, 1e-9);
}

// The epoch's line in the log.
std::string epochLine(const EpochRecord& r, int epochs, const TrainResult& result, bool better) {
  std::string line = "epoch " + std::to_string(r.epoch) + "/" + std::to_string(epochs) + ": train loss " +
                     fixedText(r.train_loss, 4) + ", val loss " + fixedText(r.val_loss, 4) + ", mean IoU " +
                     fixedText(r.val.mean_iou, 4);
  for (size_t c = 0; c < r.val.per_class.size(); ++c)
    if (c > 0 || r.val.per_class.size() == 2)
      line += ", " + result.class_names[c] + " " + fixedText(r.val.per_class[c].iou, 3);
  return line + "; " + fixedText(r.seconds, 1) + " s, " + fixedText(r.samples_per_second, 2) + " samples/s, data wait " +
         fixedText(r.data_wait, 2) + " s" + (better ? " (best)" : "");
}

// The log's first line: model, data, batch (per rank and ranks), device, seed.
std::string startLine(const TrainOptions& options, const TrainPlan& plan, const TrainResult& result,
                      const DataParallel& ranks, bool sync_batchnorm) {
  ModelSpec counted = plan.spec;
  counted.pretrained.clear();
  const std::string device_text =
      (plan.device_name == "cpu" ? "cpu, " + std::to_string(result.threads) + " threads" : plan.device_name) +
      (plan.precision != "fp32" ? ", " + plan.precision + " autocast" +
                                      (plan.on_gpu ? std::string(plan.precision == "fp16" ? " with loss scaling" : "")
                                                   : " (" + cpuBf16Instructions() + ")")
                                : std::string());
  const std::string ranks_text =
      ranks.active() ? " per rank x " + std::to_string(ranks.size()) + " ranks (" + ranks.world().launcher + ") = " +
                           std::to_string(result.batch_size * ranks.size())
                     : std::string();
  return "training " + options.model + " (" + std::to_string(parameterCount(counted)) + " parameters" +
         (plan.spec.checkpoint ? ", checkpointing" : "") + ") on " + std::to_string(plan.n_trn) +
         " samples, validating on " + std::to_string(plan.n_val) + "; batch " + std::to_string(result.batch_size) +
         ranks_text + (sync_batchnorm ? ", BatchNorm over all ranks" : "") + ", " + device_text + ", seed " +
         std::to_string(result.seed);
}

// Stage 4: the epoch loop, each epoch validated and its outputs written.
class TrainingRun {
 public:
  TrainingRun(const TrainOptions& options, const TrainPlan& plan, TrainResult& result, DataParallel& ranks,
              Progress& progress)
      : options_(options), plan_(plan), result_(result), ranks_(ranks), progress_(progress), device_(plan.device_name) {}

  void run(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer, BatchLoader& train_loader,
           BatchLoader& val_loader, const LossOptions& loss, ModelInfo info, json record, RunState state) {
    const int64_t train_batches = train_loader.batchesPerEpoch(), val_batches = val_loader.batchesPerEpoch();
    const int remaining = options_.epochs - (result_.first_epoch - 1);
    const double units = double(std::max(remaining, 1)) * double(train_batches + val_batches);
    StepOptions step;
    step.loss = loss;
    step.autocast = autocastType(plan_.precision);
    if (plan_.precision == "fp16") step.scaler = &scaler_;
    if (ranks_.active()) step.after_backward = [this](torch::nn::Module&) { ranks_.reduceGradients(); };
    // With several ranks every one must run one backward per step (the all-reduce).
    step.may_split = !ranks_.active();
    int64_t skipped_steps = 0;
    const hard_stop::LoopScope loop;  // every rank stops together at its next batch
    for (int epoch = result_.first_epoch; epoch <= options_.epochs; ++epoch) {
      const int e0 = epoch - 1;  // 0-based: seeds and the learning-rate schedule
      const double base = double(epoch - result_.first_epoch) * double(train_batches + val_batches);
      const std::string of = "epoch " + std::to_string(epoch) + "/" + std::to_string(options_.epochs);
      EpochRecord r;
      r.epoch = epoch;
      // The rate of every step, from the schedule (plateau: and the validation losses so far).
      std::vector<double> val_losses;
      for (const auto& done : result_.epochs) val_losses.push_back(done.val_loss);
      const Schedule schedule = learningRateSchedule(options_, train_batches);
      // With an encoder group (first), its rate is the schedule's times its factor (0 frozen).
      const bool encoder_group = optimizer.param_groups().size() > 1;
      const double encoder_share = encoderRate(options_, epoch);
      if (encoder_group && options_.encoder_freeze_epochs > 0 && (epoch == 1 || epoch == options_.encoder_freeze_epochs + 1))
        progress_.log(epoch <= options_.encoder_freeze_epochs
                          ? "the encoder stays frozen for the first " + std::to_string(options_.encoder_freeze_epochs) +
                                " epoch(s)"
                          : "the encoder learns from epoch " + std::to_string(epoch));
      const auto set_rate = [&](int64_t b) {
        const double lr = learningRate(schedule, int64_t(e0) * train_batches + b, val_losses);
        auto& groups = optimizer.param_groups();
        for (size_t g = 0; g < groups.size(); ++g)
          groups[g].options().set_lr(encoder_group && g == 0 ? lr * encoder_share : lr);
      };
      r.learning_rate = learningRate(schedule, int64_t(e0) * train_batches, val_losses);
      torch::manual_seed(uint64_t(result_.seed) * 1000003ull + uint64_t(e0));  // dropout

      const auto epoch_start = Clock::now();
      progress_.checkCancelled();
      trainEpoch(model, optimizer, train_loader, step, device_, ranks_, r, set_rate, [&](int64_t b, double mean_loss) {
        progress_.report((base + double(b)) / units, of + ", batch " + std::to_string(b) + "/" +
                                                         std::to_string(train_batches) + ", loss " + fixedText(mean_loss, 4));
        // Ctrl-C, SIGTERM or cancel on any rank stops every rank at the same batch.
        if (ranks_.anyCancelled(progress_.cancelled())) throw Cancelled();
      }, progress_, resumeAdvice(options_));
      ranks_.broadcastBuffers(model);
      const auto val_start = Clock::now();
      const ValidationResult v = validateEpoch(
          model, val_loader, e0, loss, device_, autocastType(plan_.precision), plan_.spec.classes, plan_.trn.metadata.ignore_index,
          ranks_, progress_, [&](int64_t done) {
            progress_.report((base + double(train_batches + done)) / units,
                             of + ", validating " + std::to_string(done) + "/" + std::to_string(val_batches));
          });
      r.validation = since(val_start);
      r.val_loss = v.loss;
      r.val = v.metrics;
      r.seconds = since(epoch_start);
      result_.epochs.push_back(r);
      if (ranks_.active()) ranks_.checkSameWeights(weightsDigest(model), epoch);  // one process: no digest to compare

      const bool better = writeOutputs(model, optimizer, r, info, record, state);
      progress_.log(epochLine(r, options_.epochs, result_, better));
      if (scaler_.skippedSteps() > skipped_steps) {
        progress_.log("float16 loss scaling skipped " + std::to_string(scaler_.skippedSteps() - skipped_steps) +
                      " steps of epoch " + std::to_string(epoch) +
                      " (gradients beyond float16's range; the scale is now " + fixedText(scaler_.scale(), 0) + ")");
        skipped_steps = scaler_.skippedSteps();
      }
      if (options_.patience > 0 && state.since_best >= options_.patience) {
        result_.stopped_early = true;
        progress_.log("early stop: no progress in " + options_.best_metric + " for " +
                      std::to_string(options_.patience) + " epochs");
        break;
      }
    }
  }

 private:
  // The outputs, each replaced atomically: best model, checkpoint, CSV, report.
  bool writeOutputs(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer, const EpochRecord& r,
                    ModelInfo& info, json& record, RunState& state) {
    const double value = metricOf(options_.best_metric, r);
    const bool better = improves(options_.best_metric, value, state.best);
    info.epochs_trained = r.epoch;
    record["epochs_trained"] = r.epoch;
    info.training_json = record.dump();
    if (better) {
      state.best = value;
      state.since_best = 0;
      result_.best_epoch = r.epoch;
      info.best_epoch = r.epoch;
      info.metrics_json = metricsJson(r.val);
      info.created = utcNow();
      if (ranks_.writes()) saveModelFile(result_.model_path, info, model);
    } else {
      ++state.since_best;
    }
    state.best_epoch = result_.best_epoch;
    state.epochs = result_.epochs;
    ModelInfo last = info;
    last.best_epoch = result_.best_epoch;
    last.metrics_json = metricsJson(r.val);
    last.created = utcNow();
    if (!ranks_.writes()) return better;  // rank 0 writes the outputs
    saveCheckpoint(result_.checkpoint_path, last, model, optimizer, state);
    writeTextAtomically(result_.csv_path, metricsCsv(result_));
    writeTextAtomically(result_.report_path, trainingReportHtml(result_));
    return better;
  }

  const TrainOptions& options_;
  const TrainPlan& plan_;
  TrainResult& result_;
  DataParallel& ranks_;
  Progress& progress_;
  const torch::Device device_;
  GradScaler scaler_;  // precision fp16: the loss scale, across epochs
};

TrainResult trainStages(const TrainOptions& options, Progress& progress) {
  // Reused blocks for the training steps, within 3% of the step's peak: the steps repeat
  // their sizes (a freer cache added 1 GiB beside unetsmall's 2.2 GiB batch of 8, and an
  // eighth 115 MiB beside its 1.2 GiB batch of conv outputs, at the same speed).
  CpuMemoryScope memory(kTrainingCacheSlack);
  TrainResult result;
  result.model = options.model;
  result.loss = options.loss;
  result.optimizer = options.optimizer;
  result.scheduler = options.scheduler;
  result.epochs_planned = options.epochs;
  result.best_metric = options.best_metric;

  // 0. The other ranks, when there are (a failure of any rank in the stages below stops
  // them all, with its message).
  const std::string device_name = rankDevice(options.run);
  resolveBackend(options.backend, device_name);  // refused alike with one process and several
  DataParallel ranks(options.run.world, options.run.collective_timeout, [&options] { return resumeAdvice(options); },
                     options.backend, device_name);
  result.world_size = ranks.size();

  // 1. Check and plan: nothing is written before everything is checked (the folders it
  // creates go again if the run fails before writing in them).
  OutputFolders folders;
  OutputLocks locks;  // one job at a time writes these outputs
  TrainPlan plan;
  std::unique_ptr<Checkpoint> resumed;
  ranks.together([&] {
    plan = planTraining(options, result, folders, locks, ranks.writes(), progress);
    resumed = resumedCheckpoint(options, plan, result);
  });

  // 2. Build, or resume: the checkpoint decides what the run was.
  BuiltRun run = buildRun(options, plan, resumed.get(), result, ranks, progress);
  SegmentationModelImpl& model = *run.model;

  // 3. The optimizer, on the device, with the run's state (the checkpoint's when resuming).
  const torch::Device device(plan.device_name);
  model.to(device);
  if (device.is_cuda()) toChannelsLast(model);
  const auto optimizer_ptr = makeOptimizer(options, model);
  torch::optim::Optimizer& optimizer = *optimizer_ptr;
  RunState state = startState(options, resumed.get(), result, model, optimizer, device, progress);
  ranks.broadcastModel(model);  // rank 0's initial weights on every rank
  ranks.attach(model);
  const auto sync_batchnorm = options.sync_batchnorm ? ranks.syncBatchNorm() : nullptr;
  result.first_epoch = int(result.epochs.size()) + 1;
  if (resumed)
    progress.log("resuming after epoch " + std::to_string(result.first_epoch - 1) + " from " + result.checkpoint_path);
  progress.log(startLine(options, plan, result, ranks, sync_batchnorm != nullptr));
  if (run.train_loader->leavesOutASample())
    progress.log("each epoch leaves out its last batch of one sample (BatchNorm needs two; the order changes "
                 "every epoch, so a different sample waits each time)");

  // 4. The epochs, each validated, then its outputs written.
  TrainingRun(options, plan, result, ranks, progress)
      .run(model, optimizer, *run.train_loader, *run.val_loader, run.loss, run.info, run.record, state);
  if (result.first_epoch > options.epochs)
    progress.log("nothing to train: the checkpoint already has " + std::to_string(result.epochs.size()) +
                 " epochs (num_epochs " + std::to_string(options.epochs) + ")");
  if (ranks.active())
    progress.log("weights identical on all " + std::to_string(ranks.size()) + " ranks after every epoch (digest " +
                 weightsDigest(model) + "); gradient all-reduce waits " + fixedText(ranks.reduceSeconds(), 2) + " s in all");
  progress.report(1.0, "done");
  return result;
}

}  // namespace

std::vector<double> inverseFrequencyWeights(const std::vector<int64_t>& class_pixels) {
  double total = 0;
  int present = 0;
  for (int64_t c : class_pixels) {
    total += double(c);
    present += c > 0;
  }
  std::vector<double> weights(class_pixels.size(), 0.0);
  for (size_t i = 0; i < class_pixels.size(); ++i)
    if (class_pixels[i] > 0) weights[i] = total / (double(present) * double(class_pixels[i]));
  return weights;
}

TrainResult train(const TrainOptions& options, Progress& progress) {
  // Stopped where it cannot stop by itself, it says what there is to resume all the same.
  const hard_stop::StopNote note([&options] { return "training stopped; " + resumeAdvice(options); });
  try {
    return trainStages(options, progress);
  } catch (const Cancelled&) {
    throw Cancelled("training stopped; " + resumeAdvice(options));
  }
}

}  // namespace geodl
