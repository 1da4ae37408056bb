#include "app/train.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <random>
#include <sstream>
#include <thread>

#include "app/batch_loader.h"
#include "app/train_report.h"
#include "core/atomic_file.h"
#include "core/batch_probe.h"
#include "core/device.h"
#include "core/errors.h"
#include "core/memory.h"
#include "core/metadata.h"
#include "core/model_file.h"
#include "core/models.h"
#include "core/ternausnet.h"
#include "core/train_step.h"
#include "io/sample_store.h"

namespace geodl {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kCheckpointKey = "geodl_checkpoint";
constexpr const char* kOptimizerKey = "optimizer";

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
  } catch (const IoError&) {
    throw InputError(std::string("the ") + role + " store '" + path +
                     "' is not a sample store (not an HDF5 file with sat_img and map_img); give "
                     "a store written by `geodl samples`");
  } catch (const InputError& e) {
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

json metricsToJson(const SegmentationMetrics& m) {
  json classes = json::array();
  for (const auto& c : m.per_class)
    classes.push_back({{"iou", c.iou}, {"precision", c.precision}, {"recall", c.recall},
                       {"f1", c.f1}, {"support", c.support}, {"present", c.present}});
  return {{"mean_iou", m.mean_iou}, {"pixel_accuracy", m.pixel_accuracy}, {"pixels", m.pixels},
          {"per_class", classes}};
}

SegmentationMetrics metricsFromJson(const json& j) {
  SegmentationMetrics m;
  m.mean_iou = j.at("mean_iou");
  m.pixel_accuracy = j.at("pixel_accuracy");
  m.pixels = j.at("pixels");
  for (const auto& c : j.at("per_class"))
    m.per_class.push_back({c.at("iou"), c.at("precision"), c.at("recall"), c.at("f1"),
                           c.at("support"), c.at("present")});
  return m;
}

json recordToJson(const EpochRecord& r) {
  return {{"epoch", r.epoch}, {"learning_rate", r.learning_rate}, {"train_loss", r.train_loss},
          {"val_loss", r.val_loss}, {"val", metricsToJson(r.val)}, {"seconds", r.seconds},
          {"data_wait", r.data_wait}, {"forward", r.forward}, {"backward", r.backward},
          {"optimizer", r.optimizer}, {"validation", r.validation},
          {"samples_per_second", r.samples_per_second}};
}

EpochRecord recordFromJson(const json& j) {
  EpochRecord r;
  r.epoch = j.at("epoch");
  r.learning_rate = j.at("learning_rate");
  r.train_loss = j.at("train_loss");
  r.val_loss = j.at("val_loss");
  r.val = metricsFromJson(j.at("val"));
  r.seconds = j.at("seconds");
  r.data_wait = j.at("data_wait");
  r.forward = j.at("forward");
  r.backward = j.at("backward");
  r.optimizer = j.at("optimizer");
  r.validation = j.at("validation");
  r.samples_per_second = j.at("samples_per_second");
  return r;
}

json optionsToJson(const TrainOptions& o) {
  return {{"train_store", o.train_store}, {"val_store", o.val_store},
          {"model", o.model}, {"checkpoint", o.checkpoint}, {"dropout", o.dropout},
          {"dropout_probability", o.dropout_probability}, {"pretrained", o.pretrained},
          {"num_trn_samples", o.num_trn_samples}, {"num_val_samples", o.num_val_samples},
          {"rotate_limit", o.augmentation.rotate_limit},
          {"rotate_prob", o.augmentation.rotate_prob},
          {"hflip_prob", o.augmentation.hflip_prob}, {"vflip_prob", o.augmentation.vflip_prob},
          {"batch_size", o.batch_size}, {"memory_budget_mib", o.memory_budget_mib},
          {"num_epochs", o.epochs}, {"learning_rate", o.learning_rate},
          {"weight_decay", o.weight_decay}, {"step_size", o.step_size}, {"gamma", o.gamma},
          {"class_weighting", o.class_weighting == ClassWeighting::None   ? "none"
                              : o.class_weighting == ClassWeighting::Auto ? "auto"
                                                                          : "given"},
          {"class_weights", o.class_weights}, {"patience", o.patience},
          {"best_metric", o.best_metric}, {"seed", o.seed}, {"deterministic", o.deterministic},
          {"threads", o.threads}, {"device", o.device}, {"bf16", o.bf16},
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
                               int classes, int ignore_index, Progress& progress,
                               const std::function<void(int64_t)>& on_batch) {
  model.eval();
  torch::NoGradGuard no_grad;
  ConfusionMatrix confusion(classes, ignore_index);
  double loss_sum = 0;
  int64_t samples = 0, done = 0;
  loader.startEpoch(epoch);
  Batch batch;
  while (loader.next(batch)) {
    progress.checkCancelled();
    auto images = batch.images.to(device, true);
    auto labels = batch.labels.to(device, true);
    torch::Tensor logits;
    {
      Bf16Autocast autocast(bf16);
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
  return {samples > 0 ? loss_sum / double(samples) : 0.0, confusion.metrics()};
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
  CpuMemoryScope memory;  // reused blocks for the training steps
  validateOptions(options);
  TrainResult result;

  // --- Everything is checked before the first step. ---
  ModelSpec spec = modelSpecFromName(options.model);
  const io::StoreContents trn = openStore(options.train_store, "training");
  const io::StoreContents val = openStore(options.val_store, "validation");
  const auto& tm = trn.metadata;
  const int store_classes = tm.num_classes;
  spec.bands = tm.bands;
  spec.classes = options.num_classes > 0 ? options.num_classes : store_classes;
  check(spec.classes > 0, "the training store does not say how many classes it has (a "
                          "geo-deep-learning store?); set global.num_classes");
  if (options.bands > 0 && options.bands != tm.bands)
    throw InputError("global.number_of_bands is " + std::to_string(options.bands) +
                     " but the training store's samples have " + std::to_string(tm.bands) +
                     " bands; set number_of_bands to " + std::to_string(tm.bands) +
                     " or create the samples again");
  if (store_classes > 0 && spec.classes != store_classes)
    throw InputError("global.num_classes is " + std::to_string(spec.classes) +
                     " but the training store was made for " + std::to_string(store_classes) +
                     " classes (background included); set num_classes to " +
                     std::to_string(store_classes));
  if (options.sample_size > 0 && options.sample_size != tm.sample_size)
    throw InputError("global.samples_size is " + std::to_string(options.sample_size) +
                     " but the training store's samples are " + std::to_string(tm.sample_size) +
                     " pixels; set samples_size to " + std::to_string(tm.sample_size));
  const auto& vm = val.metadata;
  if (vm.bands != tm.bands || vm.sample_size != tm.sample_size ||
      (vm.num_classes > 0 && vm.num_classes != spec.classes))
    throw InputError("the validation store (" + std::to_string(vm.bands) + " bands, " +
                     std::to_string(vm.sample_size) + " px, " + std::to_string(vm.num_classes) +
                     " classes) does not match the training store (" + std::to_string(tm.bands) +
                     " bands, " + std::to_string(tm.sample_size) + " px, " +
                     std::to_string(spec.classes) + " classes); create both in one `geodl "
                     "samples` run");
  spec.checkpoint = spec.checkpoint || options.checkpoint;
  spec.dropout = options.dropout;
  spec.dropout_probability = options.dropout_probability;
  validate(spec);

  const int64_t n_trn = options.num_trn_samples <= 0 ? trn.samples
                                                    : std::min(trn.samples, options.num_trn_samples);
  const int64_t n_val = options.num_val_samples <= 0 ? val.samples
                                                    : std::min(val.samples, options.num_val_samples);
  check(n_trn > 0, "the training store '" + options.train_store + "' has no samples");
  check(n_val > 0, "the validation store '" + options.val_store + "' has no samples");
  if (options.batch_size > n_trn)
    throw InputError("the training set has " + std::to_string(n_trn) +
                     " samples, fewer than one batch of " + std::to_string(options.batch_size) +
                     "; lower batch_size or create more samples");
  if (options.class_weighting == ClassWeighting::Given &&
      int(options.class_weights.size()) != spec.classes)
    throw InputError("class_weights has " + std::to_string(options.class_weights.size()) +
                     " values for " + std::to_string(spec.classes) + " classes; give one per "
                     "class, or false, or auto");
  if (!options.pretrained.empty() && !fs::exists(options.pretrained))
    throw InputError("the pretrained weights '" + options.pretrained +
                     "' do not exist; fix models." + options.model + ".pretrained or set it to "
                     "false");

  const std::string device_name = resolveDevice(options.device);
  const bool on_gpu = device_name.rfind("cuda", 0) == 0;
  if (options.bf16 && !on_gpu)
    throw InputError("bf16 autocast needs a CUDA GPU; turn bf16 off to train on the CPU");
  const torch::Device device(device_name);

  checkWritableFolder(options.output_folder);
  const fs::path folder = fs::absolute(options.output_folder);
  result.model_path = options.model_path.empty() ? (folder / "model.pt").string() : options.model_path;
  result.checkpoint_path = (folder / "last_checkpoint.pt").string();
  result.csv_path = (folder / "metrics.csv").string();
  result.report_path = (folder / "report.html").string();
  checkWritableFolder(fs::absolute(result.model_path).parent_path().string());
  if (options.resume && !fs::exists(result.checkpoint_path))
    throw InputError("nothing to resume: there is no last_checkpoint.pt in '" + folder.string() +
                     "'; run without --resume to start a new training");

  // --- Hardware and reproducibility. ---
  result.device = device_name;
  result.threads = configureThreads(options.threads);
  if (options.deterministic) {
    at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/true);
    at::globalContext().setDeterministicCuDNN(true);
    at::globalContext().setBenchmarkCuDNN(false);
  }
  result.seed = options.seed >= 0 ? options.seed : int64_t(std::random_device{}() >> 1);

  // --- Resume: the checkpoint decides what the run was. ---
  // The checkpoint is read once: weights, metadata, run state and Adam's state.
  json state;
  std::unique_ptr<LoadedModel> saved;
  torch::serialize::InputArchive saved_optimizer;
  if (options.resume) {
    saved = std::make_unique<LoadedModel>(
        loadModelFile(result.checkpoint_path, [&](torch::serialize::InputArchive& archive) {
          c10::IValue value;
          if (!archive.try_read(kCheckpointKey, value) || !value.isString())
            throw InputError("'" + result.checkpoint_path + "' is a model file, not a training "
                             "checkpoint; run without --resume");
          state = json::parse(value.toStringRef());
          archive.read(kOptimizerKey, saved_optimizer);
        }));
    const ModelInfo& info = saved->info;
    if (info.spec.architecture != spec.architecture || info.spec.bands != spec.bands ||
        info.spec.classes != spec.classes)
      throw InputError("the checkpoint in '" + folder.string() + "' is of a " +
                       architectureName(info.spec.architecture) + " with " +
                       std::to_string(info.spec.bands) + " bands and " +
                       std::to_string(info.spec.classes) + " classes, not the " +
                       architectureName(spec.architecture) + " this config describes; use "
                       "another output folder or the same settings");
    result.seed = state.at("seed");
    for (const auto& r : state.at("epochs")) result.epochs.push_back(recordFromJson(r));
  }

  // --- The model. ---
  torch::manual_seed(uint64_t(result.seed));
  ModelSpec plain = spec;
  plain.pretrained.clear();
  SegmentationModel model = makeModel(plain);
  if (!options.pretrained.empty() && !options.resume) {
    if (spec.architecture == Architecture::TernausNet && !isModelFile(options.pretrained))
      std::dynamic_pointer_cast<TernausNetImpl>(model)->loadPretrainedEncoder(options.pretrained);
    else
      loadPretrainedWeights(*model, options.pretrained);
    progress.log("weights initialised from " + options.pretrained);
  }
  spec.pretrained = options.pretrained;

  // --- Normalization, class weights. ---
  std::vector<double> mean = tm.band_mean, stdev = tm.band_std;
  if (int(mean.size()) != tm.bands || int(stdev.size()) != tm.bands) {
    // A store without statistics: measure them on (up to 512 of) the training samples.
    io::SampleStoreReader reader(options.train_store);
    const int64_t count = std::min<int64_t>(n_trn, 512);
    std::vector<double> sum(tm.bands, 0), sq(tm.bands, 0);
    std::vector<float> image(size_t(tm.sample_size) * tm.sample_size * tm.bands);
    std::vector<uint8_t> labels(size_t(tm.sample_size) * tm.sample_size);
    for (int64_t i = 0; i < count; ++i) {
      reader.read(i, image.data(), labels.data());
      for (size_t p = 0; p < image.size(); ++p) {
        sum[p % tm.bands] += image[p];
        sq[p % tm.bands] += double(image[p]) * image[p];
      }
    }
    const double n = double(count) * tm.sample_size * tm.sample_size;
    mean.assign(tm.bands, 0);
    stdev.assign(tm.bands, 1);
    for (int b = 0; b < tm.bands; ++b) {
      mean[b] = sum[b] / n;
      stdev[b] = std::sqrt(std::max(1e-12, sq[b] / n - mean[b] * mean[b]));
    }
    progress.log("the training store has no band statistics; measured them on " +
                 std::to_string(count) + " samples");
  }
  LossOptions loss;
  loss.ignore_index = tm.ignore_index;
  std::vector<double> weights;
  if (options.class_weighting == ClassWeighting::Given) weights = options.class_weights;
  if (options.class_weighting == ClassWeighting::Auto) {
    check(int(tm.class_pixel_counts.size()) == spec.classes,
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

  // --- Batch size. ---
  result.train_samples = n_trn;
  result.val_samples = n_val;
  if (options.resume) {
    result.batch_size = state.at("batch_size");
    if (options.batch_size > 0 && options.batch_size != result.batch_size)
      progress.log("resuming with the checkpoint's batch size " + std::to_string(result.batch_size) +
                   " (not " + std::to_string(options.batch_size) + "), so that the run continues "
                   "as it began");
  } else if (options.batch_size > 0) {
    result.batch_size = options.batch_size;
  } else {
    BatchProbeOptions probe;
    probe.model = options.model;
    probe.checkpoint = spec.checkpoint;
    probe.sample_size = tm.sample_size;
    probe.bands = spec.bands;
    probe.classes = spec.classes;
    probe.device = device_name;
    probe.threads = result.threads;
    probe.budget_mib = options.memory_budget_mib > 0 ? options.memory_budget_mib
                                                     : defaultMemoryBudgetMiB(device_name);
    probe.max_batch = int(std::min<int64_t>(n_trn, 100000));
    progress.log("finding the largest batch that fits " + fixed(probe.budget_mib, 0) + " MiB...");
    SubProgress probe_progress(progress, 0.0, 0.0);
    const BatchProbeResult found = probeMaxBatch(probe, probe_progress);
    if (found.max_batch < 1)
      throw InputError("not even one sample of " + std::to_string(tm.sample_size) +
                       " pixels fits the memory budget of " + fixed(probe.budget_mib, 0) +
                       " MiB; raise memory_budget_mib, turn checkpointing on, or use smaller "
                       "samples");
    result.batch_size = found.max_batch;
    result.batch_size_probed = true;
    progress.log("batch size " + std::to_string(found.max_batch) + " (automatic: " +
                 fixed(found.bytes_per_sample / (1024.0 * 1024.0), 1) + " MiB per sample, " +
                 fixed(probe.budget_mib, 0) + " MiB budget" +
                 (found.confirmed ? ", confirmed by a step" : "") + ")");
  }

  // --- Data. ---
  LoaderOptions lo;
  lo.mean = mean;
  lo.std = stdev;
  lo.num_classes = spec.classes;
  lo.ignore_index = tm.ignore_index;
  lo.seed = uint64_t(result.seed);
  lo.threads = options.loader_threads > 0
                   ? options.loader_threads
                   : int(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
  lo.prefetch = options.prefetch_batches;
  lo.pin_memory = on_gpu;
  lo.batch_size = result.batch_size;
  LoaderOptions train_lo = lo, val_lo = lo;
  train_lo.store = options.train_store;
  train_lo.samples = n_trn;
  train_lo.shuffle = true;
  train_lo.augmentation = options.augmentation;
  val_lo.store = options.val_store;
  val_lo.samples = n_val;
  BatchLoader train_loader(train_lo), val_loader(val_lo);

  // --- The model's description, for the model file. ---
  ModelInfo info;
  info.engine_version = metadata::kVersion;
  info.model_name = options.model;
  info.spec = spec;
  info.sample_size = tm.sample_size;
  info.data_type = tm.data_type;
  info.band_mean = mean;
  info.band_std = stdev;
  for (int c = 0; c < spec.classes; ++c) {
    ModelClass mc;
    mc.id = c < int(tm.class_ids.size()) ? tm.class_ids[c] : c;
    mc.name = c < int(tm.class_names.size()) ? tm.class_names[c] : std::to_string(mc.id);
    mc.colour = defaultClassColour(mc.name, c);
    info.classes.push_back(mc);
    result.class_names.push_back(mc.name);
  }
  info.ignore_index = tm.ignore_index;
  info.crs_wkt = tm.crs_wkt;
  const auto gt = io::readSampleGeotransform(options.train_store, 0);
  info.pixel_size_x = std::abs(gt[1]);
  info.pixel_size_y = std::abs(gt[5]);
  info.best_metric = options.best_metric;
  json record = optionsToJson(options);
  record["batch_size"] = result.batch_size;
  record["seed"] = result.seed;
  record["train_samples"] = n_trn;
  record["val_samples"] = n_val;

  model->to(device);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(options.learning_rate)
                                                        .weight_decay(options.weight_decay));
  // Restores weights and optimizer state after the model is on its device.
  double best = options.best_metric == "loss" ? INFINITY : -INFINITY;
  int since_best = 0;
  if (options.resume) {
    optimizer.load(saved_optimizer);
    {
      torch::NoGradGuard no_grad;
      auto target = model->named_parameters(), source = saved->model->named_parameters();
      for (auto& p : target) p.value().copy_(source[p.key()]);
      auto tb = model->named_buffers(), sb = saved->model->named_buffers();
      for (auto& b : tb) b.value().copy_(sb[b.key()]);
    }
    saved.reset();
    best = state.at("best");
    since_best = state.at("since_best");
    result.best_epoch = state.at("best_epoch");
    // Adam's state was loaded on the CPU: move it beside the parameters.
    if (on_gpu)
      for (auto& entry : optimizer.state()) {
        auto& s = static_cast<torch::optim::AdamParamState&>(*entry.second);
        s.exp_avg(s.exp_avg().to(device));
        s.exp_avg_sq(s.exp_avg_sq().to(device));
      }
  }
  result.first_epoch = int(result.epochs.size()) + 1;
  if (options.resume)
    progress.log("resuming after epoch " + std::to_string(result.first_epoch - 1) + " from " +
                 result.checkpoint_path);
  std::string device_text = device_name == "cpu"
                                ? "cpu, " + std::to_string(result.threads) + " threads"
                                : device_name;
  progress.log("training " + options.model + " (" + std::to_string(parameterCount(plain)) +
               " parameters" + (spec.checkpoint ? ", checkpointing" : "") + ") on " +
               std::to_string(n_trn) + " samples, validating on " + std::to_string(n_val) +
               "; batch " + std::to_string(result.batch_size) + ", " + device_text +
               ", seed " + std::to_string(result.seed));

  const int64_t train_batches = train_loader.batchesPerEpoch();
  const int64_t val_batches = val_loader.batchesPerEpoch();
  const int remaining = options.epochs - (result.first_epoch - 1);
  const double units = double(std::max(remaining, 1)) * double(train_batches + val_batches);
  int epochs_done_here = 0;

  StepOptions step;
  step.loss = loss;
  step.bf16_autocast = options.bf16;

  for (int epoch = result.first_epoch; epoch <= options.epochs; ++epoch) {
    const int e0 = epoch - 1;  // 0-based: seeds and the learning-rate schedule
    EpochRecord r;
    r.epoch = epoch;
    r.learning_rate = options.learning_rate * std::pow(options.gamma, e0 / options.step_size);
    for (auto& group : optimizer.param_groups())
      static_cast<torch::optim::AdamOptions&>(group.options()).lr(r.learning_rate);
    torch::manual_seed(uint64_t(result.seed) * 1000003ull + uint64_t(e0));  // dropout

    const auto epoch_start = Clock::now();
    StepTimings timings;
    step.timings = &timings;
    train_loader.startEpoch(e0);
    double loss_sum = 0;
    int64_t samples = 0, b = 0;
    Batch batch;
    const double base = double(epochs_done_here) * double(train_batches + val_batches);
    while (train_loader.next(batch, &r.data_wait)) {
      progress.checkCancelled();
      Batch on_device{batch.images.to(device, true), batch.labels.to(device, true)};
      const double value = trainStep(*model, optimizer, on_device, step);
      if (!std::isfinite(value))
        throw Error("the training loss became " + std::to_string(value) + " at epoch " +
                    std::to_string(epoch) + "; lower learning_rate");
      loss_sum += value * double(batch.images.size(0));
      samples += batch.images.size(0);
      ++b;
      progress.report((base + double(b)) / units,
                      "epoch " + std::to_string(epoch) + "/" + std::to_string(options.epochs) +
                          ", batch " + std::to_string(b) + "/" + std::to_string(train_batches) +
                          ", loss " + fixed(loss_sum / double(samples), 4));
    }
    const double train_seconds = since(epoch_start);
    r.train_loss = loss_sum / double(std::max<int64_t>(samples, 1));
    r.forward = timings.forward;
    r.backward = timings.backward;
    r.optimizer = timings.optimizer;
    r.samples_per_second = double(samples) / std::max(train_seconds, 1e-9);

    const auto val_start = Clock::now();
    const ValidationResult v = validateEpoch(
        *model, val_loader, e0, loss, device, options.bf16, spec.classes, tm.ignore_index,
        progress, [&](int64_t done) {
          progress.report((base + double(train_batches + done)) / units,
                          "epoch " + std::to_string(epoch) + "/" + std::to_string(options.epochs) +
                              ", validating " + std::to_string(done) + "/" +
                              std::to_string(val_batches));
        });
    r.validation = since(val_start);
    r.val_loss = v.loss;
    r.val = v.metrics;
    r.seconds = since(epoch_start);
    result.epochs.push_back(r);
    ++epochs_done_here;

    // --- Outputs, each replaced atomically: best model, checkpoint, CSV, report. ---
    const double value = metricOf(options.best_metric, r);
    const bool better = improves(options.best_metric, value, best);
    info.epochs_trained = epoch;
    record["epochs_trained"] = epoch;
    info.training_json = record.dump();
    if (better) {
      best = value;
      since_best = 0;
      result.best_epoch = epoch;
      info.best_epoch = epoch;
      info.metrics_json = metricsToJson(r.val).dump();
      info.created = utcNow();
      saveModelFile(result.model_path, info, *model);
    } else {
      ++since_best;
    }
    {
      json s = {{"epoch", epoch}, {"seed", result.seed}, {"batch_size", result.batch_size},
                {"best", best}, {"best_epoch", result.best_epoch}, {"since_best", since_best},
                {"epochs", json::array()}};
      for (const auto& e : result.epochs) s["epochs"].push_back(recordToJson(e));
      ModelInfo last = info;
      last.best_epoch = result.best_epoch;
      last.metrics_json = metricsToJson(r.val).dump();
      last.created = utcNow();
      saveModelFile(result.checkpoint_path, last, *model,
                    [&](torch::serialize::OutputArchive& archive) {
                      torch::serialize::OutputArchive opt;
                      optimizer.save(opt);
                      archive.write(kOptimizerKey, opt);
                      archive.write(kCheckpointKey, c10::IValue(s.dump()));
                    });
    }
    writeTextAtomically(result.csv_path, metricsCsv(result));
    writeTextAtomically(result.report_path, trainingReportHtml(result, options));

    std::string line = "epoch " + std::to_string(epoch) + "/" + std::to_string(options.epochs) +
                       ": train loss " + fixed(r.train_loss, 4) + ", val loss " +
                       fixed(r.val_loss, 4) + ", mean IoU " + fixed(r.val.mean_iou, 4);
    for (size_t c = 0; c < r.val.per_class.size(); ++c)
      if (c > 0 || r.val.per_class.size() == 2)
        line += ", " + result.class_names[c] + " " + fixed(r.val.per_class[c].iou, 3);
    line += "; " + fixed(r.seconds, 1) + " s, " + fixed(r.samples_per_second, 2) +
            " samples/s, data wait " + fixed(r.data_wait, 2) + " s" + (better ? " (best)" : "");
    progress.log(line);

    if (options.patience > 0 && since_best >= options.patience) {
      result.stopped_early = true;
      progress.log("early stop: no progress in " + options.best_metric + " for " +
                   std::to_string(options.patience) + " epochs");
      break;
    }
  }
  if (result.first_epoch > options.epochs)
    progress.log("nothing to train: the checkpoint already has " +
                 std::to_string(result.epochs.size()) + " epochs (num_epochs " +
                 std::to_string(options.epochs) + ")");
  progress.report(1.0, "done");
  return result;
}

}  // namespace geodl
