#include "app/batch_probe_options.h"

#include <cmath>
#include <cstdint>

#include "app/create_samples.h"
#include "app/shared_options.h"
#include "base/errors.h"

namespace geodl {

const OptionTable<BatchProbeOptions>& batchProbeOptionTable() {
  using O = BatchProbeOptions;
  static const OptionTable<O> table = {
      modelOption(option("model", &O::model)),
      option("sample_size", &O::sample_size)
          .range(kMinSampleSize, kMaxSampleSize).cli("sample-size").qgis("SAMPLE_SIZE")
          .describe(GEODL_TR("Sample size (pixels)"),
                    GEODL_TR("Height and width of the samples in pixels, typically 256.")),
      option("bands", &O::bands)
          .range(1, 1000).cli("bands").qgis("BANDS")
          .describe(GEODL_TR("Number of bands"), GEODL_TR("Input bands (global.number_of_bands).")),
      option("classes", &O::classes)
          .range(1, 10000).cli("classes").qgis("CLASSES")
          .describe(GEODL_TR("Number of classes"), GEODL_TR("Classes, background included (global.num_classes).")),
      checkpointOption(option("checkpoint", &O::checkpoint), false),
      option("budget_mib", &O::budget_mib)
          .range(1, 1e9).cli("budget-mib").qgis("BUDGET_MIB")
          .describe(GEODL_TR("Memory budget (MiB)"),
                    GEODL_TR("The memory a training step may use: the GPU's memory, or the RAM you can spare.")),
      deviceOption(option("device", &O::device)),
      threadsOption(option("threads", &O::threads)),
      option("confirm", &O::confirm)
          .cli("no-confirm").negatedFlag().qgis("CONFIRM", true)
          .describe(GEODL_TR("Confirm with a step at the predicted batch"),
                    GEODL_TR("Run one step at the predicted batch under the budget, stepping down if it does not "
                             "fit (--no-confirm: predict from two small batches only).")),
  };
  return table;
}

BatchProbeResult estimateBatchSize(const BatchProbeOptions& options, Progress& progress) {
  checkOptions(batchProbeOptionTable(), options);
  BatchProbeResult result = probeMaxBatch(options, progress);
  // "max_batch: 0" is no answer: the CLI and QGIS refuse it in the same words.
  if (result.max_batch == 0) {
    const auto mib = [](double bytes) { return std::to_string(int64_t(std::ceil(bytes / (1024.0 * 1024.0)))); };
    throw InputError("not even one sample of " + std::to_string(options.sample_size) + " pixels fits the budget of " +
                     optionText(options.budget_mib) + " MiB: one needs about " + mib(result.bytes_per_sample) +
                     " MiB besides the " + mib(result.fixed_bytes) + " MiB of the model, its gradients and optimizer; "
                     "raise the budget (budget_mib), turn checkpointing on, or use smaller samples");
  }
  return result;
}

}  // namespace geodl
