// Options several jobs share (device, threads, model, checkpointing, memory budget), declared
// once: each builder completes the option of a job's own field.
#pragma once

#include <string>
#include <vector>

#include "app/options.h"
#include "app/run_options.h"
#include "core/model_spec.h"

namespace geodl {

// The model names (global.model_name) and the devices, as option choices: the jobs' own,
// not the training job's (classification and the batch probe choose them too).
inline std::vector<OptionChoice> modelChoices() {
  std::vector<OptionChoice> choices;
  for (const auto& name : modelNames()) choices.push_back({name, name.c_str()});
  return choices;
}
inline const std::vector<OptionChoice>& deviceChoices() {
  static const std::vector<OptionChoice> choices = {{"auto", "auto"}, {"cpu", "cpu"}, {"cuda", "cuda"}};
  return choices;
}

// The GPUs this machine has, as values of the device's pattern: ("cuda:0", "cuda:0: NVIDIA H200").
inline std::vector<std::pair<std::string, std::string>> gpuChoices() {
  std::vector<std::pair<std::string, std::string>> values;
  for (const auto& gpu : gpus())
    values.emplace_back("cuda:" + std::to_string(gpu.index), "cuda:" + std::to_string(gpu.index) + ": " + gpu.name);
  return values;
}

// The texts, in plain functions: lupdate reads their context as "geodl" (in a template it
// would not).
struct OptionTexts {
  const char* label;
  const char* help;
  const char* minimum = "";  // what QGIS's box shows at the minimum (Option::minimumReads)
};
inline OptionTexts deviceTexts() {
  return {GEODL_TR("Device"), GEODL_TR("auto (a GPU when there is one), cpu, cuda or cuda:N.")};
}
inline OptionTexts threadsTexts() {
  return {GEODL_TR("CPU threads"), GEODL_TR("LibTorch's CPU threads (0: all cores)."), GEODL_TR("All cores")};
}
inline OptionTexts modelTexts() {
  return {GEODL_TR("Model"), GEODL_TR("The architecture; checkpointed_unet is unetsmall with gradient checkpointing.")};
}
inline OptionTexts checkpointTexts() {
  return {GEODL_TR("Gradient checkpointing"),
          GEODL_TR("Recompute activations in backward: about twice the batch for some 10-30% more time.")};
}
inline OptionTexts memoryBudgetTexts() {
  return {GEODL_TR("Memory budget of the automatic batch size (MiB)"),
          GEODL_TR("The memory batch size 0 may fill (0: half the free RAM, or 90% of the GPU's)."),
          GEODL_TR("Automatic")};
}

inline OptionTexts precisionTexts() {
  return {GEODL_TR("Precision"),
          GEODL_TR("bf16 computes in bfloat16 (training: autocast, with float32 weights, optimizer state and "
                   "loss): several times faster on CPUs with AMX-BF16 or AVX512_BF16 and on GPUs from Ampere "
                   "on (refused on others), at nearly the same results; fp16 is float16, for older GPUs "
                   "(training scales the loss); fp32 is exact; auto is bf16 where it runs, fp16 on older "
                   "GPUs, fp32 on other CPUs.")};
}

inline std::vector<OptionChoice> precisionChoices() {
  return {{"auto", GEODL_TR("auto")}, {"fp32", GEODL_TR("fp32")}, {"bf16", GEODL_TR("bf16")},
          {"fp16", GEODL_TR("fp16")}};
}

inline OptionTexts overwriteTexts() {
  return {"", GEODL_TR("Replace files that GeoDL did not write where an output's name is derived (NAME_inference.tif "
                       "in the working folder, model.pt in the output folder, the stores in DATA_PATH/samples); "
                       "without it they are refused. A path you name is replaced anyway.")};
}

inline OptionTexts collectiveTimeoutTexts() {
  return {"", GEODL_TR("Several processes (--nproc, torchrun, srun): seconds a rank waits for the others "
                       "before all stop (a rank that died or hung).")};
}

template <class O>
Option<O> collectiveTimeoutOption(Option<O> o, const std::string& key) {
  return o.range(1, 86400).config(key).cli("collective-timeout")
      .describe(collectiveTimeoutTexts().label, collectiveTimeoutTexts().help);
}

template <class O>
Option<O> precisionOption(Option<O> o, const std::string& key) {
  return o.oneOf(precisionChoices())
      .config(key).cli("precision").qgis("PRECISION", true)
      .describe(precisionTexts().label, precisionTexts().help);
}

template <class O>
Option<O> deviceOption(Option<O> o, const std::string& key = "") {
  if (!key.empty()) o.config(key);
  return o.oneOf([] { return deviceChoices(); })
      .pattern("cuda:N", gpuChoices).cli("device").qgis("DEVICE", true)
      .describe(deviceTexts().label, deviceTexts().help);
}

template <class O>
Option<O> threadsOption(Option<O> o, const std::string& key = "") {
  if (!key.empty()) o.config(key);
  return o.range(0, 1024).cli("threads").qgis("THREADS", true).minimumReads(threadsTexts().minimum)
      .describe(threadsTexts().label, threadsTexts().help);
}

template <class O>
Option<O> modelOption(Option<O> o, const std::string& key = "") {
  if (!key.empty()) o.config(key);
  return o.oneOf(modelChoices).cli("model").qgis("MODEL")
      .describe(modelTexts().label, modelTexts().help);
}

template <class O>
Option<O> checkpointOption(Option<O> o, bool advanced) {
  return o.cli("checkpoint").qgis("CHECKPOINT", advanced)
      .describe(checkpointTexts().label, checkpointTexts().help);
}

template <class O>
Option<O> memoryBudgetOption(Option<O> o, const std::string& key) {
  return o.range(0, 1e9).config(key).cli("memory-budget-mib").qgis("MEMORY_BUDGET_MIB", true).minimumReads(memoryBudgetTexts().minimum)
      .describe(memoryBudgetTexts().label, memoryBudgetTexts().help);
}

template <class O>
OptionTable<O> runOptionTable(RunOptions O::*member, const std::string& section, RunOptionSet set) {
  using R = RunOptions;
  OptionTable<R> inner;
  if (set == RunOptionSet::Computing)
    inner = {
        memoryBudgetOption(option("memory_budget_mib", &R::memory_budget_mib), section + ".memory_budget_mib"),
        threadsOption(option("threads", &R::threads), section + ".threads"),
        deviceOption(option("device", &R::device), section + ".device"),
        precisionOption(option("precision", &R::precision), section + ".precision"),
    };
  inner.push_back(collectiveTimeoutOption(option("collective_timeout", &R::collective_timeout),
                                          section + ".collective_timeout"));
  inner.push_back(option("overwrite", &R::overwrite).config(section + ".overwrite").cli("overwrite")
                      .describe(overwriteTexts().label, overwriteTexts().help));
  OptionTable<O> table;
  for (const auto& o : inner) table.push_back(nestedOption(o, member));
  return table;
}

}  // namespace geodl
