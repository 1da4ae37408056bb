// Peak memory per sample, step time per sample and the largest batch under a memory
// budget, for each model with and without gradient checkpointing, side by side.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/batch_probe.h"
#include "core/device.h"
#include "base/errors.h"
#include "core/exception_text.h"

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
  std::vector<std::string> models = {"unetsmall", "unet", "ternausnet"};
  int sample_size = 256, bands = 3, classes = 5, batch = 4, repeats = 2, threads = 0;
  double budget_mib = 4096;
  bool no_confirm = false;
  std::string device = "auto";
  std::string precision = "fp32";
  // Plain argument parsing: this program needs nothing but LibTorch.
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_memory: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--models") {
      models.clear();
      while (i + 1 < argc && std::strncmp(argv[i + 1], "--", 2) != 0) models.push_back(argv[++i]);
    } else if (arg == "--sample-size") sample_size = std::stoi(value());
    else if (arg == "--bands") bands = std::stoi(value());
    else if (arg == "--classes") classes = std::stoi(value());
    else if (arg == "--budget-mib") budget_mib = std::stod(value());
    else if (arg == "--batch") batch = std::stoi(value());
    else if (arg == "--repeats") repeats = std::stoi(value());
    else if (arg == "--threads") threads = std::stoi(value());
    else if (arg == "--device") device = value();
    else if (arg == "--precision") precision = value();
    else if (arg == "--no-confirm") no_confirm = true;
    else {
      std::fprintf(stderr,
                   "usage: bench_memory [--models NAME...] [--sample-size N] [--bands N] "
                   "[--classes N] [--budget-mib N] [--batch N] [--repeats N] [--threads N] "
                   "[--device auto|cpu|cuda] [--precision fp32|bf16|fp16] [--no-confirm]\n");
      return arg == "--help" ? 0 : 2;
    }
  }

  StderrProgress progress;
  std::vector<Row> rows;
  try {
    // cuDNN picks its fastest convolutions, as training does (deterministic false).
    geodl::configureCudnn(geodl::resolveDevice(device), /*deterministic=*/false);
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
        o.precision = geodl::resolvePrecision(precision, geodl::resolveDevice(device));
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
  std::printf("%s; bf16 instructions: %s\n", geodl::cpuModelName().c_str(),
              geodl::cpuBf16Instructions().empty() ? "none" : geodl::cpuBf16Instructions().c_str());
  std::printf("device %s, %s, %d threads, %dx%d samples, %d bands, %d classes, budget %.0f MiB, "
              "step time at batch %d (mean of %d steps)\n\n",
              first.device.c_str(), precision.c_str(), first.threads, sample_size, sample_size, bands, classes,
              budget_mib, batch, repeats);
  std::printf("| model | checkpointing | MiB per sample | fixed MiB | max batch | confirmed | "
              "step s per sample | samples/s |\n|---|---|---|---|---|---|---|---|\n");
  for (const auto& r : rows) {
    std::printf("| %s | %s | %.1f | %.1f | %d | %s | %.5f | %.1f |\n", r.model.c_str(),
                r.checkpoint ? "on" : "off", r.probe.bytes_per_sample / kMiB,
                r.probe.fixed_bytes / kMiB, r.probe.max_batch, r.probe.confirmed ? "yes" : "no",
                r.step.seconds / batch, batch / r.step.seconds);
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
