// The `geodl` command: parses arguments into the engine's options structs, calls the
// engine, and maps errors to exit codes. No computing here.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/progress_bar.h"
#include "core/batch_probe.h"
#include "core/errors.h"
#include "core/metadata.h"
#include "core/model_spec.h"

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

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kOk : kUsage;
  }

  geodl::cli::installInterruptHandler();
  try {
    if (*models) return runModels();
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
