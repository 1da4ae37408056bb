// How a job runs, whichever job: the device, threads, precision and memory budget, and the
// processes sharing it. Each job's options embed one (`run`), with one table fragment, so
// that a default or a range is written once for all the jobs.
#pragma once

#include <string>

#include "app/options.h"
#include "core/device.h"
#include "parallel/world.h"

namespace geodl {

struct RunOptions {
  std::string device = kAutomaticDevice;  // auto, cpu, cuda, cuda:N
  int threads = 0;                 // LibTorch's CPU threads; 0: all cores (with ranks: each its share)
  std::string precision = "fp32";  // auto, fp32, bf16 (resolvePrecision)
  double memory_budget_mib = 0;    // for the automatic sizes; 0: half the free RAM, or 90% of the GPU's
  // The processes sharing the job: this one's place among them (from the launcher's
  // environment; one process by default), and how long a collective waits for the others.
  WorldInfo world;
  double collective_timeout = 300;
  // Replace files at the outputs' derived names (NAME_inference_polygons.gpkg, model.pt in
  // the output folder...) that GeoDL did not write; a path the user names is replaced anyway.
  bool overwrite = false;
};

// The device this process computes on: run.device resolved (resolveDevice), and with several
// processes on a machine, local rank r takes GPU r where the device is auto or cuda.
inline std::string rankDevice(const RunOptions& run) {
  const std::string resolved = resolveDevice(run.device);
  if (resolved.rfind("cuda", 0) == 0 && run.world.local_size > 1 && (run.device == kAutomaticDevice || run.device == "cuda"))
    return "cuda:" + std::to_string(run.world.local_rank);
  return resolved;
}

// Which run options a job has: those of computing (device, threads, precision, memory
// budget) and those of processes (the collective timeout), or the processes' alone.
enum class RunOptionSet { Computing, ProcessesOnly };

// The run options of a job whose options hold them in `member`, with config keys in
// `section` (training.device, inference.threads...). Defined in shared_options.h.
template <class O>
OptionTable<O> runOptionTable(RunOptions O::*member, const std::string& section, RunOptionSet set);

}  // namespace geodl
