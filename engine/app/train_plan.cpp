// Stage 1 of training: the options, the stores and the weights files checked, the output files
// named; nothing written but the output folders.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "app/job_outputs.h"
#include "app/train_stages.h"
#include "base/errors.h"
#include "base/file_identity.h"
#include "core/device.h"
#include "core/model_spec.h"

namespace geodl {

namespace fs = std::filesystem;

void checkInput(bool ok, const std::string& message) {
  if (!ok) throw InputError(message);
}

std::string checkpointPath(const TrainOptions& options) {
  return (fs::absolute(options.output_folder) / "last_checkpoint.pt").string();
}

std::string resumeAdvice(const TrainOptions& options) {
  const auto& table = trainOptionTable();
  const auto resume = std::find_if(table.begin(), table.end(), [](const auto& o) { return o.name == "resume"; });
  const std::string checkpoint = checkpointPath(options), flag = "--" + resume->flag;
  if (!fs::exists(checkpoint))
    return "no epoch had ended: there is nothing to resume; start it again without " + flag + " (in QGIS: without \"" +
           resume->label + "\")";
  return "the last complete epoch is in " + checkpoint + ": continue with " + flag + " (in QGIS: \"" +
         resume->label + "\")";
}

namespace {

// A store's description, with the checks every store must pass.
io::StoreContents openStore(const std::string& path, const char* role) {
  // (No path at all is refused before, by checkTrainOptions.)
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

}  // namespace

void checkTrainOptions(const TrainOptions& o) {
  // What the job cannot run without, with the keys and flags that give it.
  if (o.train_store.empty() || o.val_store.empty() || o.output_folder.empty())
    throw InputError("no sample stores: give a config with global.data_path (or --data-path), or "
                     "--train-store, --val-store and --output-path");
  checkOptions(trainOptionTable(), o);
  checkInput(!o.nesterov || (o.optimizer == "sgd" && o.momentum > 0),
        "nesterov needs optimizer sgd with a momentum above 0 (momentum: 0.9, say)");
  checkInput(o.encoder_freeze_epochs <= o.epochs,
        "encoder_freeze_epochs (" + std::to_string(o.encoder_freeze_epochs) + ") must be at most num_epochs (" +
            std::to_string(o.epochs) + ")");
  checkInput(o.warmup_epochs <= o.epochs,
        "warmup_epochs (" + std::to_string(o.warmup_epochs) + ") must be at most num_epochs (" +
            std::to_string(o.epochs) + ")");
  checkInput(o.prefetch_batches >= 1, "at least one batch must be prefetched (prefetch_batches)");
}

namespace {

// The model's spec from its name and options, checked against both stores.
ModelSpec checkedSpec(const TrainOptions& options, const io::StoreContents& trn, const io::StoreContents& val) {
  ModelSpec spec = modelSpecFromName(options.model);
  const auto& tm = trn.metadata;
  const int store_classes = tm.num_classes;
  spec.bands = tm.bands;
  spec.classes = options.num_classes > 0 ? options.num_classes : store_classes;
  checkInput(spec.classes > 0, "the training store does not say how many classes it has (a "
                          "geo-deep-learning store?); set global.num_classes");
  if (options.bands > 0 && options.bands != tm.bands)
    throw InputError("global.number_of_bands is " + std::to_string(options.bands) +
                     " but the training store's samples have " + std::to_string(tm.bands) +
                     " bands; set number_of_bands to " + std::to_string(tm.bands) + " or create the samples again");
  if (store_classes > 0 && spec.classes != store_classes)
    throw InputError("global.num_classes is " + std::to_string(spec.classes) + " but the training store was made for " +
                     std::to_string(store_classes) + " classes (background included); set num_classes to " +
                     std::to_string(store_classes));
  // Labels are one byte: classes 0..n-1 and the ignore index must not meet.
  if (tm.ignore_index > 0 && tm.ignore_index < spec.classes)
    throw InputError("the training store has " + std::to_string(spec.classes) + " classes (ids 0 to " +
                     std::to_string(spec.classes - 1) + ") but its ignore index is " + std::to_string(tm.ignore_index) +
                     ", one of them: its pixels would be both a class and left out; create the samples again with "
                     "fewer classes (merge some, or list the rare ones in ignored_values) or another ignore_index");
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
  spec.wavelengths = options.wavelengths.empty() ? tm.wavelengths : options.wavelengths;
  validate(spec);
  return spec;
}

}  // namespace

TrainPlan planTraining(const TrainOptions& options, TrainResult& result, OutputFolders& folders, OutputLocks& locks,
                       bool writes,
                       Progress& progress) {
  checkTrainOptions(options);
  TrainPlan plan;
  plan.trn = openStore(options.train_store, "training");
  plan.val = openStore(options.val_store, "validation");
  plan.spec = checkedSpec(options, plan.trn, plan.val);
  plan.n_trn = options.num_trn_samples <= 0 ? plan.trn.samples : std::min(plan.trn.samples, options.num_trn_samples);
  plan.n_val = options.num_val_samples <= 0 ? plan.val.samples : std::min(plan.val.samples, options.num_val_samples);
  checkInput(plan.n_trn > 0, "the training store '" + options.train_store + "' has no samples");
  checkInput(plan.n_val > 0, "the validation store '" + options.val_store + "' has no samples");
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
  for (size_t c = 0; c < options.class_weights.size(); ++c)
    if (!std::isfinite(options.class_weights[c]) || options.class_weights[c] < 0)
      throw InputError("class_weights gives class " + std::to_string(c) + " the weight " +
                       optionText(options.class_weights[c]) +
                       ": a weight is 0 or more (0 leaves the class out of the loss); fix it, or use auto");
  if (options.class_weighting == ClassWeighting::Given &&
      std::none_of(options.class_weights.begin(), options.class_weights.end(), [](double w) { return w > 0; }))
    throw InputError("class_weights are all 0: no class would be learned; give at least one a positive weight");
  if (!options.pretrained_encoder.empty()) {
    if (!fs::exists(options.pretrained_encoder))
      throw InputError("the pretrained encoder '" + options.pretrained_encoder +
                       "' does not exist; fix training.pretrained_encoder or leave it out");
    const auto a = modelSpecFromName(options.model).architecture;
    if (!hasPretrainedEncoder(a))
      throw InputError("pretrained_encoder is for the models on a ResNet, Mix Transformer or DOFA encoder (" +
                       pretrainedEncoderModelNames() + "), not " +
                       options.model + (a == Architecture::TernausNet ? "; TernausNet takes VGG11 weights "
                                                                                 "through pretrained" : ""));
  }
  if (!options.pretrained.empty() && !fs::exists(options.pretrained))
    throw InputError("the pretrained weights '" + options.pretrained + "' do not exist; fix models." +
                     options.model + ".pretrained or set it to false");

  // The stores' datasets against their digests (one read of each, on every rank: a rank
  // waiting for another's long read could reach the collective timeout): a damaged store is
  // refused before anything is written.
  for (const auto& [role, path] : {std::pair<const char*, std::string>{"training", options.train_store},
                                   {"validation", options.val_store}}) {
    try {
      for (const auto& warning : io::verifyStore(path, [&] { progress.checkCancelled(); }))
        if (writes) progress.log("warning: " + warning);
    } catch (const InputError& e) {
      throw InputError(std::string("the ") + role + " store: " + e.what());
    }
  }

  plan.device_name = rankDevice(options.run);
  plan.on_gpu = plan.device_name.rfind("cuda", 0) == 0;
  plan.precision = resolvePrecision(options.bf16 ? "bf16" : options.run.precision, plan.device_name);

  if (writes) folders.create(options.output_folder, true);
  const fs::path folder = fs::absolute(options.output_folder);
  result.model_path = options.model_path.empty() ? (folder / "model.pt").string() : options.model_path;
  result.checkpoint_path = checkpointPath(options);
  result.csv_path = (folder / "metrics.csv").string();
  result.report_path = (folder / "report.html").string();
  if (writes) folders.create(result.model_path);
  if (options.resume && !fs::exists(result.checkpoint_path))
    throw InputError("nothing to resume: there is no last_checkpoint.pt in '" + folder.string() +
                     "'; run without --resume to start a new training");
  // A new run replaces a finished one's files (said in the log); files of other kinds, and
  // files the run reads, stay. The checkpoint being resumed is read on purpose.
  if (writes)
  for (const auto& line : checkJobFiles({{"the model file", result.model_path, FileKind::ZipArchive,
                                          options.model_path.empty(), options.run.overwrite,
                                          writtenByGeoDLCheck(FileKind::ZipArchive)},
                                         {"the checkpoint", options.resume ? "" : result.checkpoint_path,
                                          FileKind::ZipArchive, true, options.run.overwrite,
                                          writtenByGeoDLCheck(FileKind::ZipArchive)},
                                         {"the metrics", result.csv_path, FileKind::Other, true, options.run.overwrite,
                                          writtenByGeoDLCheck(FileKind::Other, "epoch,")},
                                         {"the report", result.report_path, FileKind::Other, true, options.run.overwrite,
                                          writtenByGeoDLCheck(FileKind::Other, "<!DOCTYPE html>\n<html lang='en'><head><meta "
                                                                               "charset='utf-8'><title>GeoDL")}},
                                        {{"the training store", options.train_store},
                                         {"the validation store", options.val_store},
                                         {"the pretrained weights", options.pretrained},
                                         {"the pretrained encoder", options.pretrained_encoder}},
                                        &locks))
    progress.log(line);
  result.train_samples = plan.n_trn;
  result.val_samples = plan.n_val;
  result.device = plan.device_name;
  result.precision = plan.precision;
  return plan;
}

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

}  // namespace geodl
