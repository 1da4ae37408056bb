// Peak memory per sample, step time per sample and the largest batch under a memory
// budget, for each model with and without gradient checkpointing, side by side.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/batch_probe.h"
#include "core/errors.h"

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

class StderrProgress final : public geodl::Progress {
 public:
  void report(double, const std::string&) override {}
  bool cancelled() const override { return false; }
  void log(const std::string& message) override { std::cerr << "  " << message << std::endl; }
};

struct Row {
  std::string model;
  bool checkpoint = false;
  geodl::BatchProbeResult probe;
  geodl::StepMeasurement step;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"GeoDL memory benchmark: plain against checkpointed training steps"};
  std::vector<std::string> models = {"unetsmall", "unet", "ternausnet"};
  int sample_size = 256, bands = 3, classes = 5, batch = 4, repeats = 2, threads = 0;
  double budget_mib = 4096;
  bool no_confirm = false;
  std::string device = "auto";
  app.add_option("--models", models, "Models to measure")->capture_default_str();
  app.add_option("--sample-size", sample_size)->capture_default_str();
  app.add_option("--bands", bands)->capture_default_str();
  app.add_option("--classes", classes)->capture_default_str();
  app.add_option("--budget-mib", budget_mib)->capture_default_str();
  app.add_option("--batch", batch, "Batch for the step-time measurement")->capture_default_str();
  app.add_option("--repeats", repeats, "Timed steps per configuration")->capture_default_str();
  app.add_option("--threads", threads, "CPU threads (0: all cores)")->capture_default_str();
  app.add_option("--device", device)->capture_default_str();
  app.add_flag("--no-confirm", no_confirm, "Do not run a step at the predicted max batch");
  CLI11_PARSE(app, argc, argv);

  StderrProgress progress;
  std::vector<Row> rows;
  try {
    for (const auto& model : models) {
      for (bool checkpoint : {false, true}) {
        geodl::BatchProbeOptions o;
        o.model = model;
        o.checkpoint = checkpoint;
        o.sample_size = sample_size;
        o.bands = bands;
        o.classes = classes;
        o.budget_mib = budget_mib;
        o.threads = threads;
        o.device = device;
        o.confirm = !no_confirm;
        std::cerr << model << (checkpoint ? " checkpointed" : " plain") << std::endl;
        Row row{model, checkpoint, geodl::probeMaxBatch(o, progress), {}};
        row.step = geodl::measureTrainingStep(o, batch, repeats, progress);
        rows.push_back(row);
      }
    }
  } catch (...) {
    std::cerr << "bench_memory: " << geodl::describeCurrentException() << std::endl;
    return 1;
  }

  const auto& first = rows.front().probe;
  std::printf("device %s, %d threads, %dx%d samples, %d bands, %d classes, budget %.0f MiB, "
              "step time at batch %d (mean of %d steps)\n\n",
              first.device.c_str(), first.threads, sample_size, sample_size, bands, classes,
              budget_mib, batch, repeats);
  std::printf("| model | checkpointing | MiB per sample | fixed MiB | max batch | confirmed | "
              "step s per sample |\n|---|---|---|---|---|---|---|\n");
  for (const auto& r : rows) {
    std::printf("| %s | %s | %.1f | %.1f | %d | %s | %.3f |\n", r.model.c_str(),
                r.checkpoint ? "on" : "off", r.probe.bytes_per_sample / kMiB,
                r.probe.fixed_bytes / kMiB, r.probe.max_batch, r.probe.confirmed ? "yes" : "no",
                r.step.seconds / batch);
  }
  std::printf("\n| model | memory per sample, plain/checkpointed | max batch, checkpointed/plain "
              "| step time, checkpointed/plain |\n|---|---|---|---|\n");
  for (size_t i = 0; i + 1 < rows.size(); i += 2) {
    const auto& plain = rows[i];
    const auto& ck = rows[i + 1];
    std::printf("| %s | %.2fx | %.2fx | %.2fx |\n", plain.model.c_str(),
                plain.probe.bytes_per_sample / ck.probe.bytes_per_sample,
                plain.probe.max_batch > 0 ? double(ck.probe.max_batch) / plain.probe.max_batch : 0.0,
                ck.step.seconds / plain.step.seconds);
  }
  return 0;
}
