// The `geodl` command: parses arguments into the engine's options structs, calls the
// engine, and maps errors to exit codes. No computing here.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/classify.h"
#include "app/create_samples.h"
#include "app/evaluate.h"
#include "app/train.h"
#include "cli/config.h"
#include "cli/progress_bar.h"
#include "core/batch_probe.h"
#include "core/errors.h"
#include "core/metadata.h"
#include "core/model_file.h"
#include "core/model_spec.h"
#include "io/sample_store.h"
#include "io/synthetic_scene.h"

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

enum ExitCode { kOk = 0, kUsage = 2, kInputError = 3, kIoError = 4, kCancelled = 5, kFailure = 1 };

int runModels() {
  std::cout << std::left << std::setw(20) << "model" << std::right << std::setw(14)
            << "parameters" << "  notes (3 bands, 5 classes)\n";
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
}

int runBatchSize(const geodl::BatchProbeOptions& options, bool quiet) {
  geodl::cli::ProgressBar progress(quiet);
  std::cout << "model: " << options.model << (options.checkpoint ? " (checkpointing)" : "")
            << ", sample size " << options.sample_size << ", " << options.bands << " bands, "
            << options.classes << " classes, budget " << options.budget_mib << " MiB"
            << std::endl;
  const auto result = geodl::probeMaxBatch(options, progress);
  progress.report(1.0, "done");
  std::cout << std::fixed << std::setprecision(1);
  std::cout << "device: " << result.device << ", threads: " << result.threads << "\n";
  for (const auto& m : result.measurements)
    std::cout << "batch " << m.batch << ": peak " << m.peak_bytes / kMiB << " MiB, "
              << std::setprecision(2) << m.seconds << " s\n" << std::setprecision(1);
  std::cout << "bytes_per_sample: " << std::setprecision(0) << result.bytes_per_sample << " ("
            << std::setprecision(1) << result.bytes_per_sample / kMiB << " MiB)\n";
  std::cout << "fixed: " << result.fixed_bytes / kMiB << " MiB\n";
  std::cout << "confirmed: " << (result.confirmed ? "yes" : "no") << "\n";
  std::cout << "max_batch: " << result.max_batch << std::endl;
  return kOk;
}

// The config, with a warning for each key GeoDL does not know (a typo must not pass silently).
YAML::Node loadConfigWarning(const std::string& config_path) {
  const YAML::Node config = geodl::cli::loadConfig(config_path);
  for (const auto& key : geodl::cli::unknownKeys(config))
    std::cerr << "geodl: warning: unknown config key '" << key << "' is ignored" << std::endl;
  return config;
}

// Command-line values that override config keys (unset: the config's value stays).
struct SampleOverrides {
  std::string data_path, prep_csv_file, footprint;
  int samples_size = 0, samples_dist = 0, num_classes = -1, number_of_bands = -1;
  double min_annotated_percent = -1;
  std::vector<std::string> ignore_values;
  int rank = 0, world_size = 1;
};

int runSamples(const std::string& config_path, const SampleOverrides& over, bool quiet) {
  const YAML::Node config = loadConfigWarning(config_path);
  YAML::Node patched = YAML::Clone(config);
  if (!over.data_path.empty()) patched["global"]["data_path"] = over.data_path;
  if (!over.prep_csv_file.empty()) patched["sample"]["prep_csv_file"] = over.prep_csv_file;
  if (over.samples_size > 0) patched["global"]["samples_size"] = over.samples_size;
  if (over.samples_dist > 0) patched["sample"]["samples_dist"] = over.samples_dist;
  if (over.num_classes >= 0) patched["global"]["num_classes"] = over.num_classes;
  if (over.number_of_bands >= 0) patched["global"]["number_of_bands"] = over.number_of_bands;
  if (over.min_annotated_percent >= 0)
    patched["sample"]["min_annotated_percent"] = over.min_annotated_percent;
  geodl::SampleOptions options = geodl::cli::sampleOptionsFromConfig(patched, config_path);
  // Paths given on the command line are relative to the current folder, not the config's.
  if (!over.data_path.empty())
    options.output_folder = (std::filesystem::absolute(over.data_path) / "samples").string();
  if (!over.ignore_values.empty()) options.ignored_values = over.ignore_values;
  if (!over.footprint.empty()) options.footprint_path = over.footprint;
  options.rank = over.rank;
  options.world_size = over.world_size;

  geodl::cli::ProgressBar progress(quiet);
  const auto result = geodl::createSamples(options, progress);
  progress.report(1.0, "done");
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
    std::cout << split.split << ": " << split.samples << " samples in " << split.path
              << "\n  class pixels:";
    for (size_t i = 0; i < split.class_pixels.size(); ++i)
      std::cout << " " << result.class_ids[i] << ":" << split.class_pixels[i];
    std::cout << "\n";
  }
  std::cout << "footprints: " << result.footprint_path << std::endl;
  return kOk;
}

// Command-line values for `geodl train` (unset: the config's value stays).
struct TrainOverrides {
  std::string data_path, output_path, model, batch_size, device, train_store, val_store,
      best_metric;
  int epochs = 0, threads = -1, patience = -1, samples_size = 0;
  double learning_rate = 0, memory_budget_mib = 0;
  int64_t num_trn_samples = -1, num_val_samples = -1, seed = -1;
  bool deterministic = false, resume = false, checkpoint = false, bf16 = false;
};

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int runTrain(const std::string& config_path, const TrainOverrides& over, bool quiet) {
  geodl::TrainOptions options;
  if (!config_path.empty()) {
    const YAML::Node config = loadConfigWarning(config_path);
    YAML::Node patched = YAML::Clone(config);
    if (!over.data_path.empty()) patched["global"]["data_path"] = over.data_path;
    if (!over.model.empty()) patched["global"]["model_name"] = over.model;
    if (over.samples_size > 0) patched["global"]["samples_size"] = over.samples_size;
    options = geodl::cli::trainOptionsFromConfig(patched, config_path);
    options.config_text = readText(config_path);
    if (!over.data_path.empty()) {  // relative to the current folder, not the config's
      const auto data = std::filesystem::absolute(over.data_path);
      options.train_store = (data / "samples" / "trn_samples.hdf5").string();
      options.val_store = (data / "samples" / "val_samples.hdf5").string();
      if (!YAML::Node(config["training"])["output_path"])
        options.output_folder = (data / "model").string();
    }
  } else if (over.train_store.empty() || over.val_store.empty() || over.output_path.empty()) {
    throw geodl::InputError("give a config file, or --train-store, --val-store and "
                            "--output-path");
  }
  if (!over.model.empty()) options.model = over.model;
  if (!over.train_store.empty()) options.train_store = over.train_store;
  if (!over.val_store.empty()) options.val_store = over.val_store;
  if (!over.output_path.empty()) options.output_folder = over.output_path;
  if (!over.batch_size.empty()) {
    if (over.batch_size == "auto") {
      options.batch_size = 0;
    } else {
      try {
        options.batch_size = std::stoi(over.batch_size);
      } catch (const std::exception&) {
        throw geodl::InputError("--batch-size takes a number or auto, not '" + over.batch_size + "'");
      }
    }
  }
  if (over.epochs > 0) options.epochs = over.epochs;
  if (over.learning_rate > 0) options.learning_rate = over.learning_rate;
  if (over.threads >= 0) options.threads = over.threads;
  if (over.patience >= 0) options.patience = over.patience;
  if (over.memory_budget_mib > 0) options.memory_budget_mib = over.memory_budget_mib;
  if (over.num_trn_samples >= 0) options.num_trn_samples = over.num_trn_samples;
  if (over.num_val_samples >= 0) options.num_val_samples = over.num_val_samples;
  if (over.seed >= 0) options.seed = over.seed;
  if (!over.device.empty()) options.device = over.device;
  if (!over.best_metric.empty()) options.best_metric = over.best_metric;
  options.deterministic = options.deterministic || over.deterministic;
  options.checkpoint = options.checkpoint || over.checkpoint;
  options.bf16 = options.bf16 || over.bf16;
  options.resume = over.resume;

  geodl::cli::ProgressBar progress(quiet);
  geodl::TrainResult result;
  try {
    result = geodl::train(options, progress);
  } catch (const geodl::Cancelled&) {
    std::cerr << "\ngeodl: training stopped; the last complete epoch is in "
              << (std::filesystem::absolute(options.output_folder) / "last_checkpoint.pt").string()
              << " (continue with --resume)" << std::endl;
    throw;
  }
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
  return kOk;
}

// Command-line values for `geodl classify` (unset: the config's value stays).
struct ClassifyOverrides {
  std::string input, model, sidecar, working_folder, output, device, extent, mask, mask_layer;
  int window = 0, batch_size = -1, threads = -1;
  double overlap = -1, memory_budget_mib = 0;
  bool tta = false, probabilities = false, probabilities_float = false, cog = false, polygons = false;
  double min_area = 0;
};

int runClassify(const std::string& config_path, const ClassifyOverrides& over, bool quiet) {
  namespace fs = std::filesystem;
  geodl::cli::ClassifyJob job;
  if (!config_path.empty()) {
    const YAML::Node config = loadConfigWarning(config_path);
    job = geodl::cli::classifyJobFromConfig(config, config_path);
  }
  auto& o = job.options;
  if (!over.input.empty()) {
    job.inputs.clear();
    if (fs::is_directory(over.input)) {
      for (const auto& entry : fs::directory_iterator(over.input)) {
        const std::string ext = entry.path().extension().string();
        if (entry.is_regular_file() && (ext == ".tif" || ext == ".tiff" || ext == ".TIF" || ext == ".vrt"))
          job.inputs.push_back(entry.path().string());
      }
      std::sort(job.inputs.begin(), job.inputs.end());
      if (job.inputs.empty())
        throw geodl::InputError("the folder '" + over.input + "' holds no .tif, .tiff or .vrt raster");
    } else {
      job.inputs.push_back(over.input);
    }
  }
  if (job.inputs.empty())
    throw geodl::InputError("nothing to classify: give a raster or a folder (--input), or "
                            "inference.img_csv_file in the config");
  if (!over.model.empty()) o.model_path = over.model;
  if (!over.sidecar.empty()) o.sidecar = over.sidecar;
  if (o.model_path.empty())
    throw geodl::InputError("no model file: give --model or inference.state_dict_path");
  if (!over.working_folder.empty()) job.working_folder = over.working_folder;
  if (over.window > 0) o.window = over.window;
  if (over.overlap >= 0) o.overlap = over.overlap;
  if (over.batch_size >= 0) o.batch_size = over.batch_size;
  if (over.memory_budget_mib > 0) o.memory_budget_mib = over.memory_budget_mib;
  if (over.threads >= 0) o.threads = over.threads;
  if (!over.device.empty()) o.device = over.device;
  o.tta = o.tta || over.tta;
  o.cog = over.cog;
  o.probabilities_float = over.probabilities_float;
  const bool probabilities = job.probabilities || over.probabilities || over.probabilities_float;
  if (!over.extent.empty()) {
    std::istringstream in(over.extent);
    char c1 = 0, c2 = 0, c3 = 0;
    if (!(in >> o.extent[0] >> c1 >> o.extent[1] >> c2 >> o.extent[2] >> c3 >> o.extent[3]) ||
        c1 != ',' || c2 != ',' || c3 != ',')
      throw geodl::InputError("--extent takes minx,miny,maxx,maxy in the raster's CRS, not '" +
                              over.extent + "'");
    o.has_extent = true;
  }
  if (!over.mask.empty()) o.mask = over.mask;
  if (!over.mask_layer.empty()) o.mask_layer = over.mask_layer;
  if (!over.output.empty() && job.inputs.size() > 1)
    throw geodl::InputError("--output names one file but there are " +
                            std::to_string(job.inputs.size()) + " rasters; use --working-folder");
  if (job.working_folder.empty() && over.output.empty())
    throw geodl::InputError("no output folder: give --working-folder (or --output) or "
                            "inference.working_folder");
  if (!job.working_folder.empty()) fs::create_directories(job.working_folder);
  if (!over.output.empty()) {  // its folder, when missing (the engine reports one it cannot write)
    std::error_code ignored;
    fs::create_directories(fs::absolute(over.output).parent_path(), ignored);
  }

  geodl::cli::ProgressBar progress(quiet);
  for (size_t i = 0; i < job.inputs.size(); ++i) {
    geodl::ClassifyOptions one = o;
    one.input = job.inputs[i];
    const std::string stem = fs::path(one.input).stem().string();
    one.output = !over.output.empty()
                     ? over.output
                     : (fs::path(job.working_folder) / (stem + "_inference.tif")).string();
    if (probabilities)
      one.probabilities = (fs::path(one.output).parent_path() /
                           (fs::path(one.output).stem().string() + "_probabilities.tif")).string();
    if (over.polygons)
      one.polygons = (fs::path(one.output).parent_path() /
                      (fs::path(one.output).stem().string() + "_polygons.gpkg")).string();
    one.min_area = over.min_area;
    geodl::SubProgress part(progress, double(i) / job.inputs.size(), double(i + 1) / job.inputs.size());
    const auto r = geodl::classify(one, part);
    for (const auto& w : r.warnings) std::cerr << "geodl: warning: " << w << std::endl;
    int64_t total = 0;
    for (auto c : r.class_pixels) total += c;
    std::cout << one.input << " -> " << r.output << " (" << r.width << " x " << r.height << ", "
              << r.windows_computed << " windows)\n  classes:";
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
  std::cout << std::flush;
  progress.report(1.0, "done");
  return kOk;
}

int runEvaluate(const geodl::EvaluateOptions& options, bool quiet) {
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
}

// "mean IoU 0.93, pixel accuracy 0.99; IoU background 0.996, building 0.725, ..."
std::string describeMetrics(const geodl::ModelInfo& info) {
  const auto m = nlohmann::json::parse(info.metrics_json.empty() ? "{}" : info.metrics_json);
  if (!m.contains("mean_iou")) return "none";
  std::ostringstream s;
  s << std::fixed << std::setprecision(4) << "mean IoU " << m["mean_iou"].get<double>()
    << ", pixel accuracy " << m["pixel_accuracy"].get<double>() << "; IoU";
  const auto& classes = m["per_class"];
  for (size_t c = 0; c < classes.size() && c < info.classes.size(); ++c)
    s << (c ? ", " : " ") << info.classes[c].name << " " << std::setprecision(3)
      << classes[c]["iou"].get<double>();
  return s.str();
}

std::string firstWktName(const std::string& wkt) {
  const auto open = wkt.find('"');
  if (open == std::string::npos) return wkt.empty() ? "none" : wkt;
  const auto close = wkt.find('"', open + 1);
  return wkt.substr(open + 1, close - open - 1);
}

int runInfo(const std::string& path, bool as_json) {
  std::ifstream probe(path, std::ios::binary);
  char signature[8] = {};
  probe.read(signature, 8);
  if (probe && std::string(signature + 1, 3) == "HDF") {
    const auto store = geodl::io::readStoreMetadata(path);
    const auto& m = store.metadata;
    std::cout << "sample store: " << path << "\n"
              << "split: " << m.split << "\nsamples: " << store.samples << " of " << m.sample_size
              << " x " << m.sample_size << " px, " << m.bands << " bands (" << m.data_type
              << ")\nclasses:";
    for (size_t i = 0; i < m.class_ids.size(); ++i)
      std::cout << " " << m.class_ids[i] << "=" << (i < m.class_names.size() ? m.class_names[i] : "")
                << " (" << (i < m.class_pixel_counts.size() ? m.class_pixel_counts[i] : 0)
                << " px)";
    std::cout << "\nignore index: " << m.ignore_index << "\nCRS: " << firstWktName(m.crs_wkt)
              << "\nwritten by: GeoDL " << m.engine_version << std::endl;
    return kOk;
  }
  if (as_json) {
    std::cout << geodl::toJson(geodl::readModelInfo(path), 2) << std::endl;
    return kOk;
  }
  auto loaded = geodl::loadModelFile(path);
  const auto& i = loaded.info;
  std::cout << std::setprecision(6);
  std::cout << "model file: " << path << "\n"
            << "model: " << i.model_name << " (" << geodl::architectureName(i.spec.architecture)
            << (i.spec.checkpoint ? ", trained with checkpointing" : "")
            << (i.spec.dropout ? ", dropout " + std::to_string(i.spec.dropout_probability) : "")
            << "), " << geodl::parameterCount(i.spec) << " parameters\n"
            << "bands: " << i.spec.bands << " (" << i.data_type << "), normalization mean/std:";
  for (int b = 0; b < i.spec.bands; ++b) std::cout << " " << i.band_mean[b] << "/" << i.band_std[b];
  std::cout << "\nsample size: " << i.sample_size << " px\nclasses:";
  for (const auto& c : i.classes) std::cout << " " << c.id << "=" << c.name << " " << c.colour << ";";
  std::cout << "\nignore index: " << i.ignore_index << "\nCRS: " << firstWktName(i.crs_wkt)
            << ", pixel size " << i.pixel_size_x << " x " << i.pixel_size_y << "\n"
            << "epochs trained: " << i.epochs_trained << ", best epoch " << i.best_epoch
            << " by " << i.best_metric << "\nbest metrics: " << describeMetrics(i) << "\n"
            << "written: " << i.created << " by GeoDL " << i.engine_version << "\n"
            << "weights digest: " << geodl::weightsDigest(*loaded.model) << std::endl;
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{std::string("GeoDL ") + geodl::metadata::kVersion +
               ": deep learning for geospatial imagery"};
  app.set_version_flag("--version", std::string("geodl ") + geodl::metadata::kVersion);
  app.require_subcommand(1);
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "No progress bar");

  auto* models = app.add_subcommand("models", "List the architectures and their parameter counts");

  geodl::BatchProbeOptions probe;
  auto* batch = app.add_subcommand(
      "batch-size", "Largest training batch that fits a memory budget (last line: max_batch: N)");
  std::string model_help = "Architecture:";
  for (const auto& n : geodl::modelNames()) model_help += " " + n;
  batch->add_option("--model", probe.model, model_help)->required();
  batch->add_option("--sample-size", probe.sample_size, "Sample height and width in pixels")
      ->check(CLI::Range(8, 100000))
      ->capture_default_str();
  batch->add_option("--bands", probe.bands, "Input bands")->check(CLI::Range(1, 1000))
      ->capture_default_str();
  batch->add_option("--classes", probe.classes, "Classes")->check(CLI::Range(1, 10000))
      ->capture_default_str();
  batch->add_option("--budget-mib", probe.budget_mib, "Memory budget in MiB")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  batch->add_flag("--checkpoint", probe.checkpoint, "Gradient checkpointing");
  batch->add_option("--device", probe.device, "auto, cpu, cuda or cuda:N")->capture_default_str();
  batch->add_option("--threads", probe.threads, "CPU threads (0: all cores)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  bool no_confirm = false;
  batch->add_flag("--no-confirm", no_confirm,
                  "Predict from two small batches without running a step at the prediction");

  std::string config_path;
  SampleOverrides over;
  auto* samples = app.add_subcommand(
      "samples", "Create training samples from imagery and vector ground truth (geo-deep-learning "
                 "config)");
  samples->add_option("config", config_path, "geo-deep-learning config.yaml")->required();
  samples->add_option("--data-path", over.data_path, "global.data_path (stores go to DATA_PATH/samples)");
  samples->add_option("--prep-csv-file", over.prep_csv_file, "sample.prep_csv_file");
  samples->add_option("--samples-size", over.samples_size, "global.samples_size")
      ->check(CLI::Range(8, 100000));
  samples->add_option("--samples-dist", over.samples_dist, "sample.samples_dist")
      ->check(CLI::Range(1, 100000));
  samples->add_option("--num-classes", over.num_classes, "global.num_classes")
      ->check(CLI::Range(1, 255));
  samples->add_option("--number-of-bands", over.number_of_bands, "global.number_of_bands")
      ->check(CLI::Range(1, 10000));
  samples->add_option("--min-annotated-percent", over.min_annotated_percent,
                      "sample.min_annotated_percent")
      ->check(CLI::Range(0.0, 100.0));
  samples->add_option("--ignore-values", over.ignore_values,
                      "Class values whose pixels become the ignore index (255)")
      ->delimiter(',');
  samples->add_option("--footprint", over.footprint,
                      "Footprint GeoPackage (default: DATA_PATH/samples/samples_footprint.gpkg)");
  samples->add_option("--rank", over.rank, "This process's rank (data-parallel sampling)")
      ->check(CLI::NonNegativeNumber);
  samples->add_option("--world-size", over.world_size, "Number of processes sampling")
      ->check(CLI::PositiveNumber);

  std::string scene_folder;
  int scene_size = 1024;
  uint64_t scene_seed = 1;
  auto* scene = app.add_subcommand(
      "make-scene", "Write the built-in synthetic scenes (training and validation), their "
                    "labels, prep CSV and config.yaml into a folder");
  scene->add_option("folder", scene_folder, "Output folder")->required();
  scene->add_option("--size", scene_size, "Pixels per side")->check(CLI::Range(64, 100000))
      ->capture_default_str();
  scene->add_option("--seed", scene_seed, "Random seed")->capture_default_str();

  std::string train_config;
  TrainOverrides tover;
  auto* train = app.add_subcommand(
      "train", "Train a segmentation model on sample stores (geo-deep-learning config)");
  train->add_option("config", train_config, "geo-deep-learning config.yaml (optional with "
                                            "--train-store, --val-store and --output-path)");
  train->add_option("--data-path", tover.data_path,
                    "global.data_path (stores read from DATA_PATH/samples)");
  train->add_option("--output-path", tover.output_path, "training.output_path");
  train->add_option("--train-store", tover.train_store, "Training store (instead of DATA_PATH)");
  train->add_option("--val-store", tover.val_store, "Validation store (instead of DATA_PATH)");
  train->add_option("--model", tover.model, model_help);
  train->add_option("--samples-size", tover.samples_size, "global.samples_size (checked against the stores)")
      ->check(CLI::Range(8, 100000));
  train->add_option("--epochs", tover.epochs, "training.num_epochs")->check(CLI::PositiveNumber);
  train->add_option("--batch-size", tover.batch_size,
                    "training.batch_size: a number, or auto (largest that fits the memory budget)");
  train->add_option("--memory-budget-mib", tover.memory_budget_mib,
                    "Budget for --batch-size auto (default: half the free RAM, 90% of a GPU)")
      ->check(CLI::PositiveNumber);
  train->add_option("--learning-rate", tover.learning_rate, "training.learning_rate")
      ->check(CLI::PositiveNumber);
  train->add_option("--num-trn-samples", tover.num_trn_samples, "training.num_trn_samples")
      ->check(CLI::PositiveNumber);
  train->add_option("--num-val-samples", tover.num_val_samples, "training.num_val_samples")
      ->check(CLI::PositiveNumber);
  train->add_option("--patience", tover.patience, "Early stopping after N epochs without progress")
      ->check(CLI::NonNegativeNumber);
  train->add_option("--best-metric", tover.best_metric, "loss or miou: what picks the best model")
      ->check(CLI::IsMember({"loss", "miou"}));
  train->add_option("--seed", tover.seed, "Random seed")->check(CLI::NonNegativeNumber);
  train->add_flag("--deterministic", tover.deterministic,
                  "Deterministic algorithms: the same seed gives the same losses");
  train->add_option("--threads", tover.threads, "CPU threads (0: all cores)")
      ->check(CLI::NonNegativeNumber);
  train->add_option("--device", tover.device, "auto, cpu, cuda or cuda:N");
  train->add_flag("--checkpoint", tover.checkpoint, "Gradient checkpointing");
  train->add_flag("--bf16", tover.bf16, "bfloat16 autocast (GPU)");
  train->add_flag("--resume", tover.resume,
                  "Continue from OUTPUT_PATH/last_checkpoint.pt (after a stop or a crash)");

  std::string classify_config;
  ClassifyOverrides cover;
  auto* classify = app.add_subcommand(
      "classify", "Classify rasters with a trained model (geo-deep-learning's inference config)");
  classify->add_option("config", classify_config,
                       "geo-deep-learning config.yaml (optional with --input and --model)");
  classify->add_option("--input", cover.input, "A raster, or a folder of rasters (instead of "
                                               "inference.img_csv_file)");
  classify->add_option("--model", cover.model, "Model file (inference.state_dict_path)");
  classify->add_option("--sidecar", cover.sidecar,
                       "For a TorchScript model: its description (JSON or YAML; default: beside it)");
  classify->add_option("--working-folder", cover.working_folder,
                       "Where NAME_inference.tif goes (inference.working_folder)");
  classify->add_option("--output", cover.output, "The class raster, for one input");
  classify->add_option("--window", cover.window, "Window size in pixels (inference.chunk_size; "
                                                 "default: the model's sample size)")
      ->check(CLI::Range(8, 100000));
  classify->add_option("--overlap", cover.overlap, "Overlap, percent of the window (inference.overlap)")
      ->check(CLI::Range(0.0, 99.0));
  classify->add_option("--batch-size", cover.batch_size, "Windows per forward pass (0: as many as fit memory)")
      ->check(CLI::NonNegativeNumber);
  classify->add_option("--memory-budget-mib", cover.memory_budget_mib,
                       "Budget for --batch-size 0 (default: half the free RAM, 90% of a GPU)")
      ->check(CLI::PositiveNumber);
  classify->add_flag("--tta", cover.tta, "Test-time augmentation: average 8 flips and turns");
  classify->add_flag("--probabilities", cover.probabilities,
                     "Also write NAME_inference_probabilities.tif (Byte 0-255 per class)");
  classify->add_flag("--probabilities-float", cover.probabilities_float,
                     "The probability raster as Float32 0-1");
  classify->add_flag("--cog", cover.cog, "Cloud Optimized GeoTIFF outputs");
  classify->add_flag("--polygons", cover.polygons,
                     "Also write NAME_inference_polygons.gpkg (layer classes)");
  classify->add_option("--min-area", cover.min_area,
                       "Drop polygons under this area (map units squared)")
      ->check(CLI::NonNegativeNumber);
  classify->add_option("--extent", cover.extent,
                       "minx,miny,maxx,maxy in the raster's CRS: only there (the rest is nodata)");
  classify->add_option("--mask", cover.mask,
                       "Polygons (any OGR vector): only inside them (the rest is nodata)");
  classify->add_option("--mask-layer", cover.mask_layer, "Layer of --mask (default: the first)");
  classify->add_option("--device", cover.device, "auto, cpu, cuda or cuda:N");
  classify->add_option("--threads", cover.threads, "CPU threads (0: all cores)")
      ->check(CLI::NonNegativeNumber);

  geodl::EvaluateOptions eval;
  auto* evaluate = app.add_subcommand(
      "evaluate", "Accuracy of a class raster against ground-truth polygons (IoU per class)");
  evaluate->add_option("classes", eval.classes, "Class raster (from geodl classify)")->required();
  evaluate->add_option("truth", eval.truth, "Ground-truth polygons (any OGR vector)")->required();
  evaluate->add_option("--field", eval.field, "Class attribute (ids, or the model's class names)")
      ->capture_default_str();
  evaluate->add_option("--layer", eval.layer, "Layer of the truth (default: the first)");

  std::string info_path;
  bool info_json = false;
  auto* info = app.add_subcommand("info", "Describe a model file or a sample store");
  info->add_option("file", info_path, "model.pt, last_checkpoint.pt or a .hdf5 store")->required();
  info->add_flag("--json", info_json, "The model file's metadata as JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kOk : kUsage;
  }

  geodl::cli::installInterruptHandler();
  try {
    if (*models) return runModels();
    if (*samples) return runSamples(config_path, over, quiet);
    if (*train) return runTrain(train_config, tover, quiet);
    if (*info) return runInfo(info_path, info_json);
    if (*classify) return runClassify(classify_config, cover, quiet);
    if (*evaluate) return runEvaluate(eval, quiet);
    if (*scene) {
      const std::string config = geodl::io::makeDemoDataset(scene_folder, scene_size, scene_seed);
      std::cout << "scenes, labels, prep CSV and config written; run: geodl samples " << config
                << std::endl;
      return kOk;
    }
    if (*batch) {
      probe.confirm = !no_confirm;
      geodl::modelSpecFromName(probe.model);  // unknown names fail before any work
      return runBatchSize(probe, quiet);
    }
  } catch (const geodl::Cancelled& e) {
    std::cerr << "\ngeodl: " << e.what() << std::endl;
    return kCancelled;
  } catch (const geodl::InputError& e) {
    std::cerr << "geodl: error: " << e.what() << std::endl;
    return kInputError;
  } catch (const geodl::IoError& e) {
    std::cerr << "geodl: error: " << e.what() << std::endl;
    return kIoError;
  } catch (...) {
    std::cerr << "geodl: error: " << geodl::describeCurrentException() << std::endl;
    return kFailure;
  }
  return kOk;
}
