// The `geodl` command: parses arguments into the engine's options structs, calls the
// engine, and maps errors to exit codes. No computing here.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/create_samples.h"
#include "cli/config.h"
#include "cli/progress_bar.h"
#include "core/batch_probe.h"
#include "core/errors.h"
#include "core/metadata.h"
#include "core/model_spec.h"
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

// Command-line values that override config keys (unset: the config's value stays).
struct SampleOverrides {
  std::string data_path, prep_csv_file, footprint;
  int samples_size = 0, samples_dist = 0, num_classes = -1, number_of_bands = -1;
  double min_annotated_percent = -1;
  std::vector<std::string> ignore_values;
  int rank = 0, world_size = 1;
};

int runSamples(const std::string& config_path, const SampleOverrides& over, bool quiet) {
  const YAML::Node config = geodl::cli::loadConfig(config_path);
  for (const auto& key : geodl::cli::unknownKeys(config))
    std::cerr << "geodl: warning: unknown config key '" << key << "' is ignored" << std::endl;
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

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kOk : kUsage;
  }

  geodl::cli::installInterruptHandler();
  try {
    if (*models) return runModels();
    if (*samples) return runSamples(config_path, over, quiet);
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
