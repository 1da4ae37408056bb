// The `geodl` command: a table of subcommands, each parsing its flags (made from the jobs'
// option tables) into an options struct, calling the engine and printing what it returns.
// No computing here.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "app/batch_probe_options.h"
#include "app/classify.h"
#include "app/create_samples.h"
#include "app/data_parallel.h"
#include "app/evaluate.h"
#include "app/inspect.h"
#include "app/options_reference.h"
#include "app/train.h"
#include "base/file_kind.h"
#include "cli/config.h"
#include "cli/launch.h"
#include "cli/option_flags.h"
#include "cli/progress_bar.h"
#include "parallel/backend.h"
#include "parallel/world.h"
#include "core/batch_probe.h"
#include "core/device.h"
#include "base/errors.h"
#include "core/exception_text.h"
#include "base/metadata.h"
#include "model/model_file.h"
#include "core/model_spec.h"
#include "io/raster.h"
#include "io/sample_store.h"
#include "app/demo_dataset.h"

namespace {

using geodl::cli::OptionFlags;

constexpr double kMiB = 1024.0 * 1024.0;

// kSkipped: the job finished, but on_error skip left rasters out (the summary lists them).
enum ExitCode { kOk = 0, kUsage = 2, kInputError = 3, kIoError = 4, kCancelled = 5,
                kSkipped = geodl::cli::kExitSkipped, kFailure = 1 };

// A subcommand: its flags are declared when it is added; run() does the work.
struct Subcommand {
  CLI::App* command = nullptr;
  std::function<int()> run;
};

// What every job's subcommand holds: the config path (when it takes one) and its flags.
struct JobFlags {
  std::string config_path;
  OptionFlags flags;
};

// A job's options, with a warning for each config key that will not be used (a typo must
// not pass silently).
template <class Options>
Options jobOptions(const geodl::OptionTable<Options>& table, const JobFlags& job) {
  return geodl::cli::layeredOptions(table, job.config_path, job.flags, [](const std::string& line) {
    std::cerr << "geodl: warning: " << line << std::endl;
  });
}

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Subcommand addModels(CLI::App& app) {
  Subcommand s;
  s.command = app.add_subcommand("models", "List the architectures and their parameter counts");
  s.run = [] {
    std::cout << std::left << std::setw(20) << "model" << std::right << std::setw(14) << "parameters"
              << "  notes (3 bands, 5 classes)\n";
    for (const auto& name : geodl::modelNames()) {
      geodl::ModelSpec spec = geodl::modelSpecFromName(name);
      spec.bands = 3;
      spec.classes = 5;
      std::string notes = geodl::architectureName(spec.architecture);
      if (spec.checkpoint) notes += " with gradient checkpointing";
      std::cout << std::left << std::setw(20) << name << std::right << std::setw(14)
                << geodl::parameterCount(spec) << "  " << notes << "\n";
    }
    return kOk;
  };
  return s;
}

Subcommand addBatchSize(CLI::App& app, const bool& quiet) {
  auto job = std::make_shared<JobFlags>();
  Subcommand s;
  s.command = app.add_subcommand(
      "batch-size", "Largest training batch that fits a memory budget (last line: max_batch: N)");
  job->flags.add(s.command, geodl::batchProbeOptionTable());
  s.run = [job, &quiet] {
    const auto options = jobOptions(geodl::batchProbeOptionTable(), *job);
    geodl::modelSpecFromName(options.model);  // unknown names fail before any work
    geodl::cli::ProgressBar progress(quiet);
    std::cout << "model: " << options.model << (options.checkpoint ? " (checkpointing)" : "")
              << ", sample size " << options.sample_size << ", " << options.bands << " bands, "
              << options.classes << " classes, budget " << options.budget_mib << " MiB" << std::endl;
    const auto result = geodl::estimateBatchSize(options, progress);
    progress.report(1.0, "done");
    std::cout << std::fixed << std::setprecision(1);
    std::cout << "device: " << result.device << ", threads: " << result.threads << "\n";
    for (const auto& m : result.measurements)
      std::cout << "batch " << m.batch << ": peak " << m.peak_bytes / kMiB << " MiB, " << std::setprecision(2)
                << m.seconds << " s\n" << std::setprecision(1);
    std::cout << "bytes_per_sample: " << std::setprecision(0) << result.bytes_per_sample << " ("
              << std::setprecision(1) << result.bytes_per_sample / kMiB << " MiB)\n";
    std::cout << "fixed: " << result.fixed_bytes / kMiB << " MiB\n";
    std::cout << "confirmed: " << (result.confirmed ? "yes" : "no") << "\n";
    std::cout << "max_batch: " << result.max_batch << std::endl;
    return kOk;
  };
  return s;
}

// The command line as given (for `train --nproc`, which starts copies of it).
std::vector<std::string> g_arguments;
// "rank R: " in a data-parallel job's messages.
std::string g_rank_prefix;

// The arguments without --nproc (and its value): what each rank runs.
std::vector<std::string> withoutNproc(const std::vector<std::string>& arguments) {
  std::vector<std::string> kept;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i] == "--nproc") {
      ++i;
      continue;
    }
    if (arguments[i].rfind("--nproc=", 0) == 0) continue;
    kept.push_back(arguments[i]);
  }
  return kept;
}

// `--nproc N` of a job that several processes share (app/data_parallel.h's launch table).
void addLaunchFlags(CLI::App* command, JobFlags& job) { job.flags.add(command, geodl::launchOptionTable()); }

// The --nproc given, or 1.
int nprocOf(const JobFlags& job) {
  geodl::LaunchOptions launch;
  geodl::applyOptions(geodl::launchOptionTable(), job.flags.values(), launch);
  return launch.nproc;
}

// The world this process belongs to (its messages then say its rank), or, for `--nproc N`
// without a launcher, the exit code of the N ranks it started.
std::optional<int> joinRanks(int nproc, geodl::WorldInfo& world) {
  world = geodl::worldFromEnvironment();
  if (nproc > 1 && !world.distributed()) return geodl::cli::launchLocalRanks(withoutNproc(g_arguments), nproc);
  if (world.distributed()) g_rank_prefix = "rank " + std::to_string(world.rank) + ": ";
  return std::nullopt;
}

void printSamples(const geodl::SampleResult& result) {
  for (const auto& w : result.warnings) std::cerr << "geodl: warning: " << w << std::endl;
  std::cout << "windows considered: " << result.windows << "\n";
  std::cout << "classes:";
  for (size_t i = 0; i < result.class_ids.size(); ++i)
    std::cout << " " << result.class_ids[i] << "=" << result.class_names[i];
  std::cout << "\n" << std::setprecision(4);
  std::cout << "band mean:";
  for (double m : result.band_mean) std::cout << " " << m;
  std::cout << "\nband std:";
  for (double m : result.band_std) std::cout << " " << m;
  std::cout << "\n";
  for (const auto& split : result.splits) {
    std::cout << split.split << ": " << split.samples << " samples in " << split.path << "\n  class pixels:";
    for (size_t i = 0; i < split.class_pixels.size(); ++i)
      std::cout << " " << result.class_ids[i] << ":" << split.class_pixels[i];
    std::cout << "\n";
  }
  std::cout << "footprints: " << result.footprint_path << std::endl;
}

Subcommand addSamples(CLI::App& app, const bool& quiet) {
  auto job = std::make_shared<JobFlags>();
  Subcommand s;
  s.command = app.add_subcommand(
      "samples", "Create training samples from imagery and vector ground truth (geo-deep-learning config)");
  s.command->add_option("config", job->config_path, "geo-deep-learning config.yaml")->required();
  job->flags.add(s.command, geodl::sampleOptionTable());
  addLaunchFlags(s.command, *job);
  s.run = [job, &quiet]() -> int {
    auto options = jobOptions(geodl::sampleOptionTable(), *job);
    geodl::checkSampleOptions(options);  // once, before the ranks start
    if (const auto code = joinRanks(nprocOf(*job), options.run.world)) return *code;
    geodl::cli::ProgressBar progress(quiet, options.run.world.rank);
    const auto result = geodl::createSamples(options, progress);
    progress.report(1.0, "done");
    if (options.run.world.rank == 0) printSamples(result);
    return kOk;
  };
  return s;
}

Subcommand addMakeScene(CLI::App& app) {
  auto job = std::make_shared<JobFlags>();
  auto folder = std::make_shared<std::string>();
  Subcommand s;
  s.command = app.add_subcommand("make-scene", "Write the built-in synthetic scenes (training and validation), "
                                               "their labels, prep CSV and config.yaml into a folder");
  s.command->add_option("folder", *folder, "Output folder")->required();
  job->flags.add(s.command, geodl::demoOptionTable());
  s.run = [job, folder] {
    geodl::DemoOptions options = jobOptions(geodl::demoOptionTable(), *job);
    options.folder = *folder;
    const std::string config = geodl::makeDemoDataset(options);
    std::cout << "scenes, labels, prep CSV and config written; run: geodl samples " << config << std::endl;
    return kOk;
  };
  return s;
}

void printTraining(const geodl::TrainResult& result) {
  std::cout << std::fixed << std::setprecision(4);
  if (const geodl::EpochRecord* best = result.best()) {
    std::cout << "best epoch: " << best->epoch << " (val loss " << best->val_loss << ", mean IoU "
              << best->val.mean_iou << ")\n";
    for (size_t c = 0; c < best->val.per_class.size(); ++c)
      std::cout << "  IoU " << result.class_names[c] << ": "
                << (best->val.per_class[c].present ? std::to_string(best->val.per_class[c].iou)
                                                   : std::string("absent"))
                << "\n";
  }
  std::cout << "model: " << result.model_path << "\n"
            << "checkpoint: " << result.checkpoint_path << "\n"
            << "metrics: " << result.csv_path << "\n"
            << "report: " << result.report_path << std::endl;
}

Subcommand addTrain(CLI::App& app, const bool& quiet) {
  auto job = std::make_shared<JobFlags>();
  Subcommand s;
  s.command = app.add_subcommand("train", "Train a segmentation model on sample stores (geo-deep-learning config)");
  s.command->add_option("config", job->config_path,
                        "geo-deep-learning config.yaml (optional with --train-store, --val-store and --output-path)");
  job->flags.add(s.command, geodl::trainOptionTable());
  addLaunchFlags(s.command, *job);
  s.run = [job, &quiet]() -> int {
    geodl::TrainOptions options = jobOptions(geodl::trainOptionTable(), *job);
    geodl::checkTrainOptions(options);  // once, before the ranks start
    if (const auto code = joinRanks(nprocOf(*job), options.run.world)) return *code;
    if (!job->config_path.empty()) options.config_text = readText(job->config_path);
    geodl::cli::ProgressBar progress(quiet, options.run.world.rank);
    // A stop's message says how to continue (geodl::resumeAdvice).
    const geodl::TrainResult result = geodl::train(options, progress);
    if (options.run.world.rank == 0) printTraining(result);
    return kOk;
  };
  return s;
}

// (The warnings were logged as they came.)
void printClassified(const geodl::ClassifyOptions& one, const geodl::ClassifyResult& r) {
  if (!r.skipped.empty()) {
    std::cout << one.input << ": skipped (on_error: skip), nothing written: " << r.skipped << "\n";
    return;
  }
  int64_t total = 0;
  for (auto c : r.class_pixels) total += c;
  std::cout << one.input << " -> " << r.output << " (" << r.width << " x " << r.height << ", "
            << r.windows_computed << " windows of " << r.window << " px overlapping by " << r.overlap << " px: "
            << std::fixed << std::setprecision(2) << r.computed_ratio << " pixels computed per output pixel)\n  classes:";
  for (size_t c = 0; c < r.class_pixels.size(); ++c)
    std::cout << " " << r.classes[c].name << " " << std::fixed << std::setprecision(1)
              << (total ? 100.0 * r.class_pixels[c] / total : 0.0) << "%";
  std::cout << "\n";
  if (r.nodata_pixels > 0)
    std::cout << "  nodata: " << std::fixed << std::setprecision(1)
              << 100.0 * double(r.nodata_pixels) / (double(r.width) * r.height)
              << "% (nodata input, or outside the extent or mask)\n";
  if (!r.probabilities.empty()) std::cout << "  probabilities: " << r.probabilities << "\n";
  if (!one.polygons.empty())
    std::cout << "  polygons: " << one.polygons << " (" << r.polygons << ", " << r.polygons_dropped
              << " under the minimum area dropped)\n";
}

// The whole job's summary, after a job of several rasters: what was classified, the classes
// over all of it, and every raster skipped with why.
class ClassifyJobSummary {
 public:
  void add(const geodl::ClassifyOptions& one, const geodl::ClassifyResult& r) {
    ++rasters_;
    if (!r.skipped.empty()) {
      skipped_.push_back("  " + one.input + ": " + r.skipped);
      return;
    }
    pixels_ += int64_t(r.width) * r.height;
    nodata_ += r.nodata_pixels;
    if (classes_.empty()) classes_ = r.classes;
    class_pixels_.resize(r.class_pixels.size(), 0);
    for (size_t c = 0; c < r.class_pixels.size(); ++c) class_pixels_[c] += r.class_pixels[c];
  }
  bool skippedAny() const { return !skipped_.empty(); }
  void print() const {
    if (rasters_ < 2) return;
    int64_t classified = 0;
    for (auto c : class_pixels_) classified += c;
    std::cout << "job: " << rasters_ - int64_t(skipped_.size()) << " of " << rasters_ << " rasters classified ("
              << pixels_ << " pixels, " << std::fixed << std::setprecision(1)
              << (pixels_ ? 100.0 * double(nodata_) / double(pixels_) : 0.0) << "% nodata)";
    if (classified > 0) {
      std::cout << "\n  classes:";
      for (size_t c = 0; c < class_pixels_.size() && c < classes_.size(); ++c)
        std::cout << " " << classes_[c].name << " " << 100.0 * double(class_pixels_[c]) / double(classified) << "%";
    }
    std::cout << "\n";
    if (!skipped_.empty()) {
      std::cout << skipped_.size() << " skipped (on_error: skip):\n";
      for (const auto& line : skipped_) std::cout << line << "\n";
    }
  }

 private:
  int64_t rasters_ = 0, pixels_ = 0, nodata_ = 0;
  std::vector<geodl::ModelClass> classes_;
  std::vector<int64_t> class_pixels_;
  std::vector<std::string> skipped_;
};

Subcommand addClassify(CLI::App& app, const bool& quiet) {
  auto job = std::make_shared<JobFlags>();
  Subcommand s;
  s.command = app.add_subcommand("classify",
                                 "Classify rasters with a trained model (geo-deep-learning's inference config)");
  s.command->add_option("config", job->config_path, "geo-deep-learning config.yaml (optional with --input and --model)");
  job->flags.add(s.command, geodl::classifyOptionTable());
  addLaunchFlags(s.command, *job);
  s.run = [job, &quiet]() -> int {
    const geodl::ClassifyJob options = jobOptions(geodl::classifyOptionTable(), *job);
    auto runs = geodl::classifyRuns(options);  // checked once, before the ranks start
    geodl::WorldInfo world;
    if (const auto code = joinRanks(nprocOf(*job), world)) return *code;
    for (auto& run : runs) run.run.world = world;
    geodl::cli::ProgressBar progress(quiet, world.rank);
    ClassifyJobSummary summary;
    geodl::classifyAll(runs, progress, [&](size_t i, const geodl::ClassifyResult& r) {
      printClassified(runs[i], r);
      summary.add(runs[i], r);
    });
    summary.print();
    std::cout << std::flush;
    progress.report(1.0, "done");
    return summary.skippedAny() ? kSkipped : kOk;
  };
  return s;
}

Subcommand addEvaluate(CLI::App& app, const bool& quiet) {
  auto job = std::make_shared<JobFlags>();
  auto files = std::make_shared<std::pair<std::string, std::string>>();
  Subcommand s;
  s.command = app.add_subcommand("evaluate", "Accuracy of a class raster against ground-truth polygons (IoU per class)");
  s.command->add_option("classes", files->first, "Class raster (from geodl classify)")->required();
  s.command->add_option("truth", files->second, "Ground-truth polygons (any OGR vector)")->required();
  job->flags.add(s.command, geodl::evaluateOptionTable());
  s.run = [job, files, &quiet] {
    geodl::EvaluateOptions options = jobOptions(geodl::evaluateOptionTable(), *job);
    options.classes = files->first;
    options.truth = files->second;
    geodl::cli::ProgressBar progress(quiet);
    const auto r = geodl::evaluate(options, progress);
    progress.report(1.0, "done");
    const auto& m = r.metrics;
    std::cout << std::fixed << std::setprecision(4);
    std::cout << "class                 IoU  precision  recall      F1      pixels\n";
    for (size_t c = 0; c < m.per_class.size(); ++c) {
      const auto& k = m.per_class[c];
      if (!k.present) continue;
      std::cout << std::left << std::setw(16) << r.names[c] << std::right << std::setw(9) << k.iou
                << std::setw(11) << k.precision << std::setw(8) << k.recall << std::setw(8) << k.f1
                << std::setw(12) << k.support << "\n";
    }
    std::cout << "mean IoU: " << m.mean_iou << "\npixel accuracy: " << m.pixel_accuracy
              << "\npixels counted: " << m.pixels << std::endl;
    return kOk;
  };
  return s;
}

// "mean IoU 0.93, pixel accuracy 0.99; IoU background 0.996, building 0.725, ..."
std::string describeMetrics(const geodl::Inspection& found) {
  const geodl::RecordedMetrics& m = found.metrics;
  if (!m.present) return "none";
  std::ostringstream s;
  s << std::fixed << std::setprecision(4) << "mean IoU " << m.mean_iou << ", pixel accuracy " << m.pixel_accuracy
    << "; IoU";
  for (size_t c = 0; c < m.class_iou.size() && c < found.model.classes.size(); ++c)
    s << (c ? ", " : " ") << found.model.classes[c].name << " " << std::setprecision(3) << m.class_iou[c];
  return s.str();
}

std::string firstWktName(const std::string& wkt) {
  const auto open = wkt.find('"');
  if (open == std::string::npos) return wkt.empty() ? "none" : wkt;
  const auto close = wkt.find('"', open + 1);
  return wkt.substr(open + 1, close - open - 1);
}

int printStore(const geodl::Inspection& found) {
  const auto& store = found.store;
  const auto& m = store.metadata;
  std::cout << "sample store: " << found.path << "\n"
            << "split: " << m.split << "\nsamples: " << store.samples << " of " << m.sample_size << " x "
            << m.sample_size << " px, " << m.bands << " bands (" << m.data_type << ")\nclasses:";
  for (size_t i = 0; i < m.class_ids.size(); ++i)
    std::cout << " " << m.class_ids[i] << "=" << (i < m.class_names.size() ? m.class_names[i] : "") << " ("
              << (i < m.class_pixel_counts.size() ? m.class_pixel_counts[i] : 0) << " px)";
  std::cout << "\nwavelengths (micrometres):";
  if (m.wavelengths.empty()) std::cout << " not known";
  for (double w : m.wavelengths) std::cout << " " << w;
  std::cout << "\nignore index: " << m.ignore_index << "\nCRS: " << firstWktName(m.crs_wkt)
            << "\nwritten by: GeoDL " << m.engine_version
            << "\ndigests: " << (found.warnings.empty() ? "every dataset matches its own" : "none") << std::endl;
  for (const auto& w : found.warnings) std::cerr << "geodl: warning: " << w << std::endl;
  return kOk;
}

// "trained on N ranks, batch B per rank (global G)\n" for a data-parallel run, else nothing.
std::string describeRanks(const geodl::TrainingFacts& t) {
  if (t.world_size < 2) return "";
  return "trained on " + std::to_string(t.world_size) + " ranks, batch " + std::to_string(t.batch_size) +
         " per rank (global " + std::to_string(t.global_batch) + ")\n";
}

// "pretrained encoder: FILE (digest D)\n" when training started from one, else nothing.
std::string describeEncoder(const geodl::TrainingFacts& t) {
  if (t.pretrained_encoder.empty()) return "";
  return "pretrained encoder: " + t.pretrained_encoder + " (digest " + t.pretrained_encoder_digest + ")\n";
}

int printModel(const geodl::Inspection& found) {
  const auto& i = found.model;
  std::cout << std::setprecision(6);
  std::cout << "model file: " << found.path << "\n"
            << "model: " << i.model_name << " (" << geodl::architectureName(i.spec.architecture)
            << (i.spec.checkpoint ? ", trained with checkpointing" : "")
            << (i.spec.dropout ? ", dropout " + std::to_string(i.spec.dropout_probability) : "") << "), "
            << found.parameters << " parameters\n"
            << "bands: " << i.spec.bands << " (" << i.data_type << "), normalization mean/std:";
  for (int b = 0; b < i.spec.bands; ++b) std::cout << " " << i.band_mean[b] << "/" << i.band_std[b];
  std::cout << "\nvalue range:";
  if (i.band_min.empty()) std::cout << " not recorded (a file from before GeoDL kept it)";
  for (size_t b = 0; b < i.band_min.size(); ++b) std::cout << " " << i.band_min[b] << "-" << i.band_max[b];
  std::cout << "\nwavelengths (micrometres):";
  if (i.spec.wavelengths.empty()) std::cout << " not known";
  for (double w : i.spec.wavelengths) std::cout << " " << w;
  std::cout << "\nsample size: " << i.sample_size << " px\nclasses:";
  for (const auto& c : i.classes) std::cout << " " << c.id << "=" << c.name << " " << c.colour << ";";
  std::cout << "\nignore index: " << i.ignore_index << "\nCRS: " << firstWktName(i.crs_wkt) << ", pixel size "
            << i.pixel_size_x << " x " << i.pixel_size_y << "\n"
            << "epochs trained: " << i.epochs_trained << ", best epoch " << i.best_epoch << " by " << i.best_metric
            << "\nbest metrics: " << describeMetrics(found) << "\n" << describeEncoder(found.training)
            << describeRanks(found.training) << "written: " << i.created << " by GeoDL " << i.engine_version << "\n"
            << "weights digest: " << found.weights_digest
            << (found.warnings.empty() ? " (checked against the one written with the file)" : "") << std::endl;
  for (const auto& w : found.warnings) std::cerr << "geodl: warning: " << w << std::endl;
  return kOk;
}

Subcommand addInfo(CLI::App& app) {
  struct Info {
    std::string path;
    bool json = false;
  };
  auto info = std::make_shared<Info>();
  Subcommand s;
  s.command = app.add_subcommand("info", "Describe a model file or a sample store");
  s.command->add_option("file", info->path, "model.pt, last_checkpoint.pt or a .hdf5 store")->required();
  s.command->add_flag("--json", info->json, "The model file's metadata as JSON");
  s.run = [info]() -> int {
    // --json: a model file's metadata without its weights (inspect reads what a file is).
    const auto kind = info->json ? geodl::fileKind(info->path) : geodl::FileKind::Missing;
    if (info->json && kind != geodl::FileKind::Hdf5 && kind != geodl::FileKind::Folder) {
      std::cout << geodl::toJson(geodl::readModelInfo(info->path), 2) << std::endl;
      return kOk;
    }
    const geodl::Inspection found = geodl::inspect(info->path);
    return found.kind == geodl::Inspection::Kind::Store ? printStore(found) : printModel(found);
  };
  return s;
}

Subcommand addOptions(CLI::App& app) {
  Subcommand s;
  s.command = app.add_subcommand("options", "Print the reference of every option (docs/options.md)");
  auto qgis = std::make_shared<bool>(false);
  s.command->add_flag("--qgis", *qgis, "Only the Processing parameters of each algorithm (the README's list)");
  s.run = [qgis] {
    std::cout << (*qgis ? geodl::processingParameterSummary() : geodl::optionsReference());
    return kOk;
  };
  return s;
}

int runReportingErrors(const std::function<int()>& run) {
  try {
    return run();
  } catch (const geodl::Cancelled& e) {
    std::cerr << "\ngeodl: " << g_rank_prefix << e.what() << std::endl;
    return kCancelled;
  } catch (const geodl::InputError& e) {
    std::cerr << "geodl: " << g_rank_prefix << "error: " << e.what() << std::endl;
    return kInputError;
  } catch (const geodl::IoError& e) {
    std::cerr << "geodl: " << g_rank_prefix << "error: " << e.what() << std::endl;
    return kIoError;
  } catch (const std::filesystem::filesystem_error&) {  // a path the system refused (too long, a loop)
    std::cerr << "geodl: " << g_rank_prefix << "error: " << geodl::describeCurrentException() << std::endl;
    return kIoError;
  } catch (...) {
    std::cerr << "geodl: " << g_rank_prefix << "error: " << geodl::describeCurrentException() << std::endl;
    return kFailure;
  }
}

// "geodl 0.1.0", the QGIS the plugin of the same build loads into, what it computes with
// (LibTorch, CUDA, cuDNN, NCCL) and the GPUs it sees.
std::string versionText() {
  std::string text = std::string("geodl ") + geodl::metadata::kVersion;
  if (*geodl::metadata::kQgisBuiltFor)
    text += std::string(" (QGIS plugin built for QGIS ") + geodl::metadata::kQgisBuiltFor + ")";
  text += "\n" + geodl::libtorchDescription();
  if (const std::string nccl = geodl::ncclVersion(); !nccl.empty()) text += ", NCCL " + nccl;
  text += "\n" + geodl::gpuDescription();
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  // First: a SIGTERM from here on stops the job cleanly (before main, while the libraries
  // load, nothing can be done and nothing has been written).
  geodl::cli::installInterruptHandler();
  for (const std::string& warning : geodl::dropBadRuntimeVariables()) std::cerr << "geodl: warning: " << warning << std::endl;
  geodl::io::quietLibraryMessages();
  g_arguments.assign(argv + 1, argv + argc);
  CLI::App app{std::string("GeoDL ") + geodl::metadata::kVersion + ": deep learning for geospatial imagery"};
  app.set_version_flag("--version", versionText());
  app.require_subcommand(1);
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "No progress bar");
  const std::vector<Subcommand> subcommands = {
      addModels(app),       addBatchSize(app, quiet), addSamples(app, quiet), addMakeScene(app),
      addTrain(app, quiet), addClassify(app, quiet),  addEvaluate(app, quiet), addInfo(app),
      addOptions(app),
  };
  // The first word that is not an option names the subcommand: say which ones exist.
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.rfind("-", 0) == 0) continue;
    if (app.get_subcommands([&](CLI::App* s) { return s->get_name() == word; }).empty()) {
      std::string names;
      for (const auto& s : subcommands) names += (names.empty() ? "" : ", ") + s.command->get_name();
      std::cerr << "geodl: error: unknown subcommand '" << word << "'; the subcommands are: " << names << std::endl;
      return kUsage;
    }
    break;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kOk : kUsage;
  }
  for (const auto& s : subcommands)
    if (*s.command) return runReportingErrors(s.run);
  return kOk;
}
