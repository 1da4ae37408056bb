#include "app/train.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "app/batch_loader.h"
#include "app/create_samples.h"
#include "app/data_parallel.h"
#include "core/sync_batch_norm.h"
#include "app/train_checkpoint.h"
#include "app/train_report.h"
#include "base/atomic_file.h"
#include "core/batch_probe.h"
#include "core/device.h"
#include "core/lr_schedule.h"
#include "base/errors.h"
#include "base/file_identity.h"
#include "core/memory.h"
#include "base/metadata.h"
#include "model/model_file.h"
#include "core/models.h"
#include "core/ternausnet.h"
#include "core/train_step.h"
#include "io/band_statistics.h"
#include "io/sample_store.h"

namespace geodl {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::ostringstream s;
  s << std::put_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
  return s.str();
}

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

// A store's description, with the checks every store must pass.
io::StoreContents openStore(const std::string& path, const char* role) {
  if (path.empty())
    throw InputError(std::string("no ") + role + " store given; create the stores with `geodl "
                     "samples` (they go to <global.data_path>/samples)");
  if (!fs::exists(path))
    throw InputError(std::string("the ") + role + " store '" + path +
                     "' does not exist; create it with `geodl samples` (or GeoDL's \"Create "
                     "training samples\") and check global.data_path");
  try {
    io::StoreContents store = io::readStoreMetadata(path);
    io::SampleStoreReader reader(path);  // checks the datasets' shapes
    return store;
  } catch (const Error& e) {  // IoError or InputError: the store named, with its role
    throw InputError(std::string("the ") + role + " store: " + e.what());
  }
}

void check(bool ok, const std::string& message) {
  if (!ok) throw InputError(message);
}

void validateOptions(const TrainOptions& o) {
  check(o.epochs >= 1, "num_epochs must be at least 1 (got " + std::to_string(o.epochs) + ")");
  check(o.batch_size >= 0, "batch_size must be a positive number, or auto (0)");
  check(o.learning_rate > 0, "learning_rate must be positive");
  check(o.weight_decay >= 0, "weight_decay cannot be negative");
  check(o.step_size >= 1, "step_size must be at least 1 epoch");
  check(o.gamma > 0, "gamma must be positive");
  check(o.momentum >= 0 && o.momentum < 1, "momentum must be at least 0 and below 1");
  check(!o.nesterov || (o.optimizer == "sgd" && o.momentum > 0),
        "nesterov needs optimizer sgd with a momentum above 0 (momentum: 0.9, say)");
  check(o.encoder_freeze_epochs >= 0 && o.encoder_freeze_epochs <= o.epochs,
        "encoder_freeze_epochs must be between 0 and num_epochs (" + std::to_string(o.epochs) + ")");
  check(o.encoder_lr_factor >= 0, "encoder_lr_factor cannot be negative");
  check(o.warmup_epochs >= 0 && o.warmup_epochs <= o.epochs,
        "warmup_epochs must be between 0 and num_epochs (" + std::to_string(o.epochs) + ")");
  check(o.patience >= 0, "patience cannot be negative (0 turns early stopping off)");
  check(o.best_metric == "loss" || o.best_metric == "miou",
        "best_metric must be loss or miou (got '" + o.best_metric + "')");
  const auto& a = o.augmentation;
  for (double p : {a.rotate_prob, a.hflip_prob, a.vflip_prob})
    check(p >= 0 && p <= 1, "augmentation probabilities must be between 0 and 1");
  check(a.rotate_limit >= 0 && a.rotate_limit <= 180,
        "rotate_limit must be between 0 and 180 degrees");
  check(o.loader_threads >= 0 && o.prefetch_batches >= 1,
        "loader threads cannot be negative and at least one batch must be prefetched");
  check(o.memory_budget_mib >= 0, "memory_budget_mib cannot be negative");
  check(o.output_folder.empty() == false, "no output folder given (training.output_path)");
}

// The digest of a file's bytes (the pretrained encoder's, recorded in the model file); "" for
// none or one that cannot be read.
std::string fileDigest(const std::string& path) {
  if (path.empty()) return "";
  std::ifstream file(path, std::ios::binary);
  if (!file) return "";
  uint64_t hash = kDigestStart;
  std::vector<char> buffer(1 << 20);
  while (file.read(buffer.data(), std::streamsize(buffer.size())) || file.gcount() > 0)
    addToDigest(hash, buffer.data(), size_t(file.gcount()));
  return digestText(hash);
}

json optionsToJson(const TrainOptions& o) {
  return {{"train_store", o.train_store}, {"val_store", o.val_store},
          {"model", o.model}, {"checkpoint", o.checkpoint}, {"dropout", o.dropout},
          {"dropout_probability", o.dropout_probability}, {"pretrained", o.pretrained},
          {"pretrained_encoder", o.pretrained_encoder}, {"pretrained_encoder_digest", fileDigest(o.pretrained_encoder)},
          {"encoder_freeze_epochs", o.encoder_freeze_epochs}, {"encoder_lr_factor", o.encoder_lr_factor},
          {"num_trn_samples", o.num_trn_samples}, {"num_val_samples", o.num_val_samples},
          {"rotate_limit", o.augmentation.rotate_limit},
          {"rotate_prob", o.augmentation.rotate_prob},
          {"hflip_prob", o.augmentation.hflip_prob}, {"vflip_prob", o.augmentation.vflip_prob},
          {"batch_size", o.batch_size}, {"memory_budget_mib", o.memory_budget_mib},
          {"num_epochs", o.epochs}, {"learning_rate", o.learning_rate},
          {"optimizer", o.optimizer}, {"weight_decay", o.weight_decay}, {"momentum", o.momentum},
          {"nesterov", o.nesterov}, {"scheduler", o.scheduler}, {"step_size", o.step_size}, {"gamma", o.gamma},
          {"warmup_epochs", o.warmup_epochs},
          {"class_weighting", o.class_weighting == ClassWeighting::None   ? "none"
                              : o.class_weighting == ClassWeighting::Auto ? "auto"
                                                                          : "given"},
          {"class_weights", o.class_weights}, {"patience", o.patience},
          {"loss", o.loss}, {"best_metric", o.best_metric}, {"seed", o.seed}, {"deterministic", o.deterministic},
          {"threads", o.threads}, {"device", o.device}, {"precision", o.precision}, {"bf16", o.bf16},
          {"config", o.config_text}};
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
                               const LossOptions& loss, const torch::Device& device, bool bf16,
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
      Bf16Autocast autocast(bf16, device);
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

// What the run will be, checked before the first step: the model, the stores, the device.
struct TrainPlan {
  ModelSpec spec;  // bands and classes from the stores
  io::StoreContents trn, val;
  int64_t n_trn = 0, n_val = 0;
  std::string device_name;
  bool on_gpu = false;
  bool bf16 = false;  // the precision resolved
};

// The model's spec from its name and options, checked against both stores.
ModelSpec checkedSpec(const TrainOptions& options, const io::StoreContents& trn, const io::StoreContents& val) {
  ModelSpec spec = modelSpecFromName(options.model);
  const auto& tm = trn.metadata;
  const int store_classes = tm.num_classes;
  spec.bands = tm.bands;
  spec.classes = options.num_classes > 0 ? options.num_classes : store_classes;
  check(spec.classes > 0, "the training store does not say how many classes it has (a "
                          "geo-deep-learning store?); set global.num_classes");
  if (options.bands > 0 && options.bands != tm.bands)
    throw InputError("global.number_of_bands is " + std::to_string(options.bands) +
                     " but the training store's samples have " + std::to_string(tm.bands) +
                     " bands; set number_of_bands to " + std::to_string(tm.bands) + " or create the samples again");
  if (store_classes > 0 && spec.classes != store_classes)
    throw InputError("global.num_classes is " + std::to_string(spec.classes) + " but the training store was made for " +
                     std::to_string(store_classes) + " classes (background included); set num_classes to " +
                     std::to_string(store_classes));
  if (options.sample_size > 0 && options.sample_size != tm.sample_size)
    throw InputError("global.samples_size is " + std::to_string(options.sample_size) +
                     " but the training store's samples are " + std::to_string(tm.sample_size) +
                     " pixels; set samples_size to " + std::to_string(tm.sample_size));
  const auto& vm = val.metadata;
  if (vm.bands != tm.bands || vm.sample_size != tm.sample_size || (vm.num_classes > 0 && vm.num_classes != spec.classes))
    throw InputError("the validation store (" + std::to_string(vm.bands) + " bands, " + std::to_string(vm.sample_size) +
                     " px, " + std::to_string(vm.num_classes) + " classes) does not match the training store (" +
                     std::to_string(tm.bands) + " bands, " + std::to_string(tm.sample_size) + " px, " +
                     std::to_string(spec.classes) + " classes); create both in one `geodl samples` run");
  if (!vm.data_type.empty() && !tm.data_type.empty() && vm.data_type != tm.data_type)
    throw InputError("the training store holds " + tm.data_type + " pixels and the validation store " + vm.data_type +
                     ": the normalization learnt on the one would be wrong for the other; create both in one "
                     "`geodl samples` run, from rasters of one data type");
  if (tm.sample_size < kMinSampleSize)
    throw InputError("the training store's samples are " + std::to_string(tm.sample_size) + " pixels, under the " +
                     std::to_string(kMinSampleSize) + " the networks need; create samples of at least " +
                     std::to_string(kMinSampleSize) + " pixels");
  spec.checkpoint = spec.checkpoint || options.checkpoint == "true";
  spec.dropout = options.dropout;
  spec.dropout_probability = options.dropout_probability;
  validate(spec);
  return spec;
}

// Stage 1: everything checked, the output files named; nothing written yet.
TrainPlan planTraining(const TrainOptions& options, TrainResult& result, OutputFolders& folders, bool writes,
                       Progress& progress) {
  validateOptions(options);
  TrainPlan plan;
  plan.trn = openStore(options.train_store, "training");
  plan.val = openStore(options.val_store, "validation");
  plan.spec = checkedSpec(options, plan.trn, plan.val);
  plan.n_trn = options.num_trn_samples <= 0 ? plan.trn.samples : std::min(plan.trn.samples, options.num_trn_samples);
  plan.n_val = options.num_val_samples <= 0 ? plan.val.samples : std::min(plan.val.samples, options.num_val_samples);
  check(plan.n_trn > 0, "the training store '" + options.train_store + "' has no samples");
  check(plan.n_val > 0, "the validation store '" + options.val_store + "' has no samples");
  if (options.batch_size > plan.n_trn)
    throw InputError("the training set has " + std::to_string(plan.n_trn) + " samples, fewer than one batch of " +
                     std::to_string(options.batch_size) + "; lower batch_size or create more samples");
  const int least = minimumTrainingBatch(plan.spec.architecture);
  if (options.batch_size > 0 && options.batch_size < least)
    throw InputError(options.model + " trains on batches of at least " + std::to_string(least) +
                     " samples (the BatchNorm after its image pooling sees one value per channel and sample); "
                     "set batch_size to " + std::to_string(least) + " or more");
  if (options.class_weighting == ClassWeighting::Given && int(options.class_weights.size()) != plan.spec.classes)
    throw InputError("class_weights has " + std::to_string(options.class_weights.size()) + " values for " +
                     std::to_string(plan.spec.classes) + " classes; give one per class, or false, or auto");
  if (!options.pretrained_encoder.empty()) {
    if (!fs::exists(options.pretrained_encoder))
      throw InputError("the pretrained encoder '" + options.pretrained_encoder +
                       "' does not exist; fix training.pretrained_encoder or leave it out");
    const auto a = modelSpecFromName(options.model).architecture;
    if (!hasResNetEncoder(a))
      throw InputError("pretrained_encoder is for the models on a ResNet encoder (" + resnetModelNames() + "), not " +
                       options.model + (a == Architecture::TernausNet ? "; TernausNet takes VGG11 weights "
                                                                                 "through pretrained" : ""));
  }
  if (!options.pretrained.empty() && !fs::exists(options.pretrained))
    throw InputError("the pretrained weights '" + options.pretrained + "' do not exist; fix models." +
                     options.model + ".pretrained or set it to false");

  plan.device_name = resolveDevice(options.device);
  plan.on_gpu = plan.device_name.rfind("cuda", 0) == 0;
  plan.bf16 = resolvePrecision(options.bf16 ? "bf16" : options.precision, plan.device_name) == "bf16";

  if (writes) folders.create(options.output_folder, true);
  const fs::path folder = fs::absolute(options.output_folder);
  result.model_path = options.model_path.empty() ? (folder / "model.pt").string() : options.model_path;
  result.checkpoint_path = (folder / "last_checkpoint.pt").string();
  result.csv_path = (folder / "metrics.csv").string();
  result.report_path = (folder / "report.html").string();
  if (writes) folders.create(result.model_path);
  if (options.resume && !fs::exists(result.checkpoint_path))
    throw InputError("nothing to resume: there is no last_checkpoint.pt in '" + folder.string() +
                     "'; run without --resume to start a new training");
  // A new run replaces a finished one's files (said in the log); files of other kinds, and
  // files the run reads, stay. The checkpoint being resumed is read on purpose.
  if (writes)
  for (const auto& line : checkJobFiles({{"the model file", result.model_path, FileKind::ZipArchive},
                                         {"the checkpoint", options.resume ? "" : result.checkpoint_path,
                                          FileKind::ZipArchive},
                                         {"the metrics", result.csv_path, FileKind::Other},
                                         {"the report", result.report_path, FileKind::Other}},
                                        {{"the training store", options.train_store},
                                         {"the validation store", options.val_store},
                                         {"the pretrained weights", options.pretrained},
                                         {"the pretrained encoder", options.pretrained_encoder}}))
    progress.log(line);
  result.train_samples = plan.n_trn;
  result.val_samples = plan.n_val;
  result.device = plan.device_name;
  result.precision = plan.bf16 ? "bf16" : "fp32";
  return plan;
}

// The checkpoint of the run being resumed, checked against the plan.
std::unique_ptr<Checkpoint> resumedCheckpoint(const TrainOptions& options, const TrainPlan& plan,
                                              const TrainResult& result) {
  if (!options.resume) return nullptr;
  auto checkpoint = std::make_unique<Checkpoint>(loadCheckpoint(result.checkpoint_path));
  const ModelSpec& saved = checkpoint->model->info.spec;
  const ModelSpec& spec = plan.spec;
  if (saved.architecture != spec.architecture || saved.bands != spec.bands || saved.classes != spec.classes)
    throw InputError("the checkpoint in '" + fs::absolute(options.output_folder).string() + "' is of a " +
                     architectureName(saved.architecture) + " with " + std::to_string(saved.bands) + " bands and " +
                     std::to_string(saved.classes) + " classes, not the " + architectureName(spec.architecture) +
                     " this config describes; use another output folder or the same settings");
  return checkpoint;
}

// The model at its initial weights (the seed's, or pretrained ones).
SegmentationModel buildModel(const TrainOptions& options, const ModelSpec& spec, int64_t seed, Progress& progress) {
  torch::manual_seed(uint64_t(seed));
  ModelSpec plain = spec;
  plain.pretrained.clear();
  SegmentationModel model = makeModel(plain);
  if (!options.pretrained.empty() && !options.resume) {
    if (spec.architecture == Architecture::TernausNet && !isModelFile(options.pretrained))
      std::dynamic_pointer_cast<TernausNetImpl>(model)->loadVgg11Encoder(options.pretrained);
    else
      for (const auto& w : loadPretrainedWeights(*model, options.pretrained)) progress.log("warning: " + w);
    progress.log("weights initialised from " + options.pretrained);
  }
  if (!options.pretrained_encoder.empty() && !options.resume)
    for (const auto& line : model->loadPretrainedEncoder(options.pretrained_encoder))
      progress.log("pretrained encoder: " + line);
  return model;
}

// The inputs' normalization: the store's band statistics, or measured on (up to 512 of) its
// samples for a store without them (geo-deep-learning's).
void bandNormalization(const TrainOptions& options, const TrainPlan& plan, std::vector<double>& mean,
                       std::vector<double>& stdev, Progress& progress) {
  const auto& tm = plan.trn.metadata;
  mean = tm.band_mean;
  stdev = tm.band_std;
  if (int(mean.size()) == tm.bands && int(stdev.size()) == tm.bands) return;
  const int64_t count = std::min<int64_t>(plan.n_trn, 512);
  const io::BandStatistics stats = io::measureStoreStatistics(options.train_store, count);
  mean = stats.mean();
  stdev = stats.stddev(1e-12);
  progress.log("the training store has no band statistics; measured them on " + std::to_string(count) + " samples");
}

LossOptions lossOptions(const TrainOptions& options, const TrainPlan& plan, Progress& progress) {
  const auto& tm = plan.trn.metadata;
  LossOptions loss;
  loss.kind = lossKind(options.loss);
  loss.ignore_index = tm.ignore_index;
  if (loss.kind != LossKind::CrossEntropy) progress.log("loss: " + options.loss);
  std::vector<double> weights;
  if (options.class_weighting == ClassWeighting::Given) weights = options.class_weights;
  if (options.class_weighting == ClassWeighting::Auto) {
    check(int(tm.class_pixel_counts.size()) == plan.spec.classes,
          "class_weights: auto needs the training store's class pixel counts, which it does not "
          "have; give the weights as a list");
    weights = inverseFrequencyWeights(tm.class_pixel_counts);
  }
  if (!weights.empty()) {
    loss.class_weights = torch::tensor(weights, torch::kDouble).to(torch::kFloat);
    std::string text;
    for (double w : weights) text += " " + fixed(w, 3);
    progress.log("class weights:" + text);
  }
  return loss;
}

// The batch-size probe for this run: its model, samples, precision, device and budget.
BatchProbeOptions probeOptions(const TrainOptions& options, const TrainPlan& plan, const TrainResult& result) {
  BatchProbeOptions probe;
  probe.model = options.model;
  probe.checkpoint = plan.spec.checkpoint;
  probe.bf16 = plan.bf16;
  probe.sample_size = plan.trn.metadata.sample_size;
  probe.bands = plan.spec.bands;
  probe.classes = plan.spec.classes;
  probe.device = plan.device_name;
  probe.threads = result.threads;
  probe.budget_mib = options.memory_budget_mib > 0 ? options.memory_budget_mib : defaultMemoryBudgetMiB(plan.device_name);
  probe.max_batch = int(std::min<int64_t>(plan.n_trn, 100000));
  return probe;
}

// The batch size: the checkpoint's when resuming, the one asked for, or the largest that fits.
int chooseBatchSize(const TrainOptions& options, const TrainPlan& plan, const Checkpoint* resumed,
                    TrainResult& result, Progress& progress) {
  if (resumed) {
    const int batch = resumed->state.batch_size;
    if (options.batch_size > 0 && options.batch_size != batch)
      progress.log("resuming with the checkpoint's batch size " + std::to_string(batch) + " (not " +
                   std::to_string(options.batch_size) + "), so that the run continues as it began");
    return batch;
  }
  if (options.batch_size > 0) return options.batch_size;  // checked by the plan
  const int least = minimumTrainingBatch(plan.spec.architecture);
  const BatchProbeOptions probe = probeOptions(options, plan, result);
  progress.log("finding the largest batch that fits " + fixed(probe.budget_mib, 0) + " MiB...");
  SubProgress probe_progress(progress, 0.0, 0.0);
  const BatchProbeResult found = probeMaxBatch(probe, probe_progress);
  if (found.max_batch < least)
    throw InputError(std::string(least == 1 ? "not even one sample" : "not even a batch of " + std::to_string(least)) +
                     " of " + std::to_string(probe.sample_size) + " pixels fits the memory budget of " + fixed(probe.budget_mib, 0) +
                     " MiB; raise memory_budget_mib, turn checkpointing on, or use smaller samples");
  result.batch_size_probed = true;
  progress.log("batch size " + std::to_string(found.max_batch) + " (automatic: " +
               fixed(found.bytes_per_sample / (1024.0 * 1024.0), 1) + " MiB per sample, " +
               fixed(probe.budget_mib, 0) + " MiB budget" + (found.confirmed ? ", confirmed by a step" : "") + ")");
  return found.max_batch;
}

// checkpoint auto: on only when the batch would not fit the memory budget without it (two
// measured steps at small batches give the line; a chosen batch size fits by construction).
bool chooseCheckpointing(const TrainOptions& options, const TrainPlan& plan, const TrainResult& result,
                         Progress& progress) {
  if (options.checkpoint != "auto" || plan.spec.checkpoint) return plan.spec.checkpoint;
  if (result.batch_size_probed) {
    progress.log("checkpointing off (automatic: the batch size was chosen to fit without it)");
    return false;
  }
  BatchProbeOptions probe = probeOptions(options, plan, result);
  probe.confirm = false;
  probe.max_batch = 2 * result.batch_size;  // far enough to decide, and no large step measured
  SubProgress probe_progress(progress, 0.0, 0.0);
  const BatchProbeResult found = probeMaxBatch(probe, probe_progress);
  const double need_mib = (found.fixed_bytes + found.bytes_per_sample * result.batch_size) / (1024.0 * 1024.0);
  const bool on = found.max_batch < result.batch_size;
  progress.log(std::string(on ? "checkpointing on" : "checkpointing off") + " (automatic: a batch of " +
               std::to_string(result.batch_size) + " needs about " + fixed(need_mib, 0) + " MiB without it, " +
               (on ? "more than" : "within") + " the budget of " + fixed(probe.budget_mib, 0) + " MiB)");
  return on;
}

// The loaders' options: training (shuffled, augmented) or validation.
LoaderOptions loaderOptions(const TrainOptions& options, const TrainPlan& plan, const std::vector<double>& mean,
                            const std::vector<double>& stdev, const TrainResult& result, bool training) {
  LoaderOptions lo;
  lo.mean = mean;
  lo.std = stdev;
  lo.num_classes = plan.spec.classes;
  lo.ignore_index = plan.trn.metadata.ignore_index;
  lo.seed = uint64_t(result.seed);
  lo.threads = options.loader_threads > 0 ? options.loader_threads
                                          : int(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
  lo.prefetch = options.prefetch_batches;
  lo.pin_memory = plan.on_gpu;
  lo.batch_size = result.batch_size;
  lo.store = training ? options.train_store : options.val_store;
  lo.samples = training ? plan.n_trn : plan.n_val;
  lo.shuffle = training;
  if (training) lo.augmentation = options.augmentation;
  lo.rank = options.world.rank;
  lo.world_size = options.world.size;
  lo.equal_shares = training;  // every rank takes as many steps (a step is a collective)
  lo.drop_single = training;
  return lo;
}

// What the model file says of the model: everything classification needs.
ModelInfo describeModel(const TrainOptions& options, const TrainPlan& plan, const std::vector<double>& mean,
                        const std::vector<double>& stdev, TrainResult& result) {
  const auto& tm = plan.trn.metadata;
  ModelInfo info;
  info.engine_version = metadata::kVersion;
  info.model_name = options.model;
  info.spec = plan.spec;
  info.spec.pretrained = options.pretrained;
  info.sample_size = tm.sample_size;
  info.data_type = tm.data_type;
  info.band_mean = mean;
  info.band_std = stdev;
  for (int c = 0; c < plan.spec.classes; ++c) {
    ModelClass mc;
    mc.id = c < int(tm.class_ids.size()) ? tm.class_ids[c] : c;
    mc.name = c < int(tm.class_names.size()) ? tm.class_names[c] : std::to_string(mc.id);
    mc.colour = defaultClassColour(mc.name, c);
    info.classes.push_back(mc);
    result.class_names.push_back(mc.name);
    result.class_colours.push_back(mc.colour);
  }
  info.ignore_index = tm.ignore_index;
  info.crs_wkt = tm.crs_wkt;
  const auto gt = io::readSampleGeotransform(options.train_store, 0);
  info.pixel_size_x = std::abs(gt[1]);
  info.pixel_size_y = std::abs(gt[5]);
  info.best_metric = options.best_metric;
  return info;
}

// One epoch's training pass: the record's losses, timings and speed.
// The optimizer the options name, over the model's parameters: models with an encoder get
// two groups, the encoder's first (its own learning rate, see encoderRate).
std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const TrainOptions& o, SegmentationModelImpl& model) {
  namespace optim = torch::optim;
  std::vector<optim::OptimizerParamGroup> groups;
  const auto encoder = model.encoderParameters();
  if (encoder.empty()) {
    groups.emplace_back(model.parameters());
  } else {
    std::set<const void*> in_encoder;
    for (const auto& p : encoder) in_encoder.insert(p.unsafeGetTensorImpl());
    std::vector<torch::Tensor> rest;
    for (const auto& p : model.parameters())
      if (!in_encoder.count(p.unsafeGetTensorImpl())) rest.push_back(p);
    groups.emplace_back(encoder);
    groups.emplace_back(rest);
  }
  if (o.optimizer == "adamw")
    return std::make_unique<optim::AdamW>(std::move(groups),
                                          optim::AdamWOptions(o.learning_rate).weight_decay(o.weight_decay));
  if (o.optimizer == "sgd")
    return std::make_unique<optim::SGD>(std::move(groups), optim::SGDOptions(o.learning_rate)
                                                               .momentum(o.momentum)
                                                               .nesterov(o.nesterov)
                                                               .weight_decay(o.weight_decay));
  return std::make_unique<optim::Adam>(std::move(groups),
                                       optim::AdamOptions(o.learning_rate).weight_decay(o.weight_decay));
}

// The encoder group's share of the schedule's rate in `epoch` (1-based): 0 while frozen.
double encoderRate(const TrainOptions& o, int epoch) {
  return epoch <= o.encoder_freeze_epochs ? 0.0 : o.encoder_lr_factor;
}

// The learning-rate schedule of the run, with `steps_per_epoch` optimizer steps an epoch.
Schedule learningRateSchedule(const TrainOptions& o, int64_t steps_per_epoch) {
  Schedule s;
  s.kind = scheduleKind(o.scheduler);
  s.base = o.learning_rate;
  s.epochs = o.epochs;
  s.steps_per_epoch = steps_per_epoch;
  s.step_size = o.step_size;
  s.gamma = o.gamma;
  s.warmup_epochs = o.warmup_epochs;
  return s;
}

void trainEpoch(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer, BatchLoader& loader,
                StepOptions& step, const torch::Device& device, DataParallel& ranks, EpochRecord& r,
                const std::function<void(int64_t)>& before_batch, const std::function<void(int64_t, double)>& on_batch) {
  StepTimings timings;
  step.timings = &timings;
  const auto start = Clock::now();
  loader.startEpoch(r.epoch - 1);
  double loss_sum = 0;
  int64_t samples = 0, b = 0;
  Batch batch;
  while (loader.next(batch, &r.data_wait)) {
    Batch on_device{batch.images.to(device, true), batch.labels.to(device, true)};
    before_batch(b);
    const double value = trainStep(model, optimizer, on_device, step);
    if (!std::isfinite(value))
      throw Error("the training loss became " + std::to_string(value) + " at epoch " + std::to_string(r.epoch) +
                  "; lower learning_rate");
    loss_sum += value * double(batch.images.size(0));
    samples += batch.images.size(0);
    on_batch(++b, loss_sum / double(samples));
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
                     fixed(r.train_loss, 4) + ", val loss " + fixed(r.val_loss, 4) + ", mean IoU " +
                     fixed(r.val.mean_iou, 4);
  for (size_t c = 0; c < r.val.per_class.size(); ++c)
    if (c > 0 || r.val.per_class.size() == 2)
      line += ", " + result.class_names[c] + " " + fixed(r.val.per_class[c].iou, 3);
  return line + "; " + fixed(r.seconds, 1) + " s, " + fixed(r.samples_per_second, 2) + " samples/s, data wait " +
         fixed(r.data_wait, 2) + " s" + (better ? " (best)" : "");
}

// The training options and what the run made of them, as the model file keeps them.
json trainingRecord(const TrainOptions& options, const TrainPlan& plan, const TrainResult& result, int world_size) {
  json record = optionsToJson(options);
  record["batch_size"] = result.batch_size;
  record["seed"] = result.seed;
  record["train_samples"] = plan.n_trn;
  record["val_samples"] = plan.n_val;
  record["world_size"] = world_size;
  record["global_batch"] = result.batch_size * world_size;
  return record;
}

// The log's first line: model, data, batch (per rank and ranks), device, seed.
std::string startLine(const TrainOptions& options, const TrainPlan& plan, const TrainResult& result,
                      const DataParallel& ranks, bool sync_batchnorm) {
  ModelSpec counted = plan.spec;
  counted.pretrained.clear();
  const std::string device_text =
      (plan.device_name == "cpu" ? "cpu, " + std::to_string(result.threads) + " threads" : plan.device_name) +
      (plan.bf16 ? ", bf16 autocast" + (plan.on_gpu ? std::string() : " (" + cpuBf16Instructions() + ")") : "");
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

// Stages 3 and 4: the epoch loop, each epoch validated and its outputs written.
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
    step.bf16_autocast = plan_.bf16;
    if (ranks_.active()) step.after_backward = [this](torch::nn::Module&) { ranks_.reduceGradients(); };
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
                                                         std::to_string(train_batches) + ", loss " + fixed(mean_loss, 4));
        // Ctrl-C, SIGTERM or cancel on any rank stops every rank at the same batch.
        if (ranks_.anyCancelled(progress_.cancelled())) throw Cancelled();
      });
      ranks_.broadcastBuffers(model);
      const auto val_start = Clock::now();
      const ValidationResult v = validateEpoch(
          model, val_loader, e0, loss, device_, plan_.bf16, plan_.spec.classes, plan_.trn.metadata.ignore_index,
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
};

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
  DataParallel ranks(options.world, options.collective_timeout,
                     "the last complete epoch is in last_checkpoint.pt: continue with --resume");
  result.world_size = ranks.size();

  // 1. Check and plan: nothing is written before everything is checked (the folders it
  // creates go again if the run fails before writing in them).
  OutputFolders folders;
  TrainPlan plan;
  std::unique_ptr<Checkpoint> resumed;
  ranks.together([&] {
    plan = planTraining(options, result, folders, ranks.writes(), progress);
    resumed = resumedCheckpoint(options, plan, result);
  });
  const WorldInfo& world = options.world;
  if (plan.on_gpu && world.local_size > 1 && (options.device == "auto" || options.device == "cuda"))
    plan.device_name = "cuda:" + std::to_string(world.local_rank);  // local rank r takes GPU r

  // 2. Build, or resume: the checkpoint decides what the run was. With ranks, each uses
  // its share of the cores unless threads says otherwise.
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  result.threads = configureThreads(options.threads == 0 && world.local_size > 1
                                        ? std::max(1, cores / world.local_size) : options.threads);
  if (options.deterministic) {
    at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/true);
    at::globalContext().setDeterministicCuDNN(true);
    at::globalContext().setBenchmarkCuDNN(false);
  }
  result.seed = ranks.rankZeroValue(resumed ? resumed->state.seed
                                             : options.seed >= 0 ? options.seed : int64_t(std::random_device{}() >> 1));
  if (resumed) result.epochs = resumed->state.epochs;
  SegmentationModel model;
  std::vector<double> mean, stdev;
  LossOptions loss;
  ranks.together([&] {
    model = buildModel(options, plan.spec, result.seed, progress);
    bandNormalization(options, plan, mean, stdev, progress);
    loss = lossOptions(options, plan, progress);
    result.batch_size = chooseBatchSize(options, plan, resumed.get(), result, progress);
  });
  // Each rank probed its own memory: the smallest batch fits them all, and checkpointing
  // where any rank needs it.
  result.batch_size = int(ranks.minimum(result.batch_size));
  ranks.together([&] { plan.spec.checkpoint = chooseCheckpointing(options, plan, result, progress); });
  plan.spec.checkpoint = ranks.minimum(plan.spec.checkpoint ? 0 : 1) == 0;
  model->setCheckpointing(plan.spec.checkpoint);
  result.checkpointing = plan.spec.checkpoint;
  BatchLoader train_loader(loaderOptions(options, plan, mean, stdev, result, true));
  BatchLoader val_loader(loaderOptions(options, plan, mean, stdev, result, false));
  const ModelInfo info = describeModel(options, plan, mean, stdev, result);
  const json record = trainingRecord(options, plan, result, ranks.size());
  // Every rank must train the same run: the options, the data, the version.
  json same = record;
  same["engine_version"] = metadata::kVersion;
  same["band_mean"] = mean;
  same["band_std"] = stdev;
  same["resumed_epochs"] = result.epochs.size();
  ranks.checkSameRun(same.dump());

  const torch::Device device(plan.device_name);
  model->to(device);
  if (resumed && resumed->state.optimizer != options.optimizer)
    throw InputError("the checkpoint was trained with optimizer " + resumed->state.optimizer + ", not " +
                     options.optimizer + "; resume with --optimizer " + resumed->state.optimizer +
                     ", or run again without --resume (it starts from epoch 1)");
  const auto optimizer_ptr = makeOptimizer(options, *model);
  torch::optim::Optimizer& optimizer = *optimizer_ptr;
  RunState state;
  state.optimizer = options.optimizer;
  state.seed = result.seed;
  state.batch_size = result.batch_size;
  state.best = options.best_metric == "loss" ? INFINITY : -INFINITY;
  if (resumed) {
    state.best = resumed->state.best;
    state.since_best = resumed->state.since_best;
    result.best_epoch = resumed->state.best_epoch;
    for (const auto& w : resumed->model->warnings) progress.log("warning: " + w);
    restoreCheckpoint(*resumed, *model, optimizer, device);
  }
  ranks.broadcastModel(*model);  // rank 0's initial weights on every rank
  ranks.attach(*model);
  const auto sync_batchnorm = options.sync_batchnorm ? ranks.syncBatchNorm() : nullptr;
  result.first_epoch = int(result.epochs.size()) + 1;
  if (resumed)
    progress.log("resuming after epoch " + std::to_string(result.first_epoch - 1) + " from " + result.checkpoint_path);
  progress.log(startLine(options, plan, result, ranks, sync_batchnorm != nullptr));
  if (train_loader.leavesOutASample())
    progress.log("each epoch leaves out its last batch of one sample (BatchNorm needs two; the order changes "
                 "every epoch, so a different sample waits each time)");

  // 3 and 4. The epochs, each validated, then its outputs written.
  TrainingRun(options, plan, result, ranks, progress)
      .run(*model, optimizer, train_loader, val_loader, loss, info, record, state);
  if (result.first_epoch > options.epochs)
    progress.log("nothing to train: the checkpoint already has " + std::to_string(result.epochs.size()) +
                 " epochs (num_epochs " + std::to_string(options.epochs) + ")");
  if (ranks.active())
    progress.log("weights identical on all " + std::to_string(ranks.size()) + " ranks after every epoch (digest " +
                 weightsDigest(*model) + "); gradient all-reduce waits " + fixed(ranks.reduceSeconds(), 2) + " s in all");
  progress.report(1.0, "done");
  return result;
}

}  // namespace geodl
