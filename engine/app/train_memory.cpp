// Memory in training: the batch size that fits the budget, and whether checkpointing is needed
// for the batch, both measured by real steps (core/batch_probe.h).
#include <algorithm>

#include "app/train_stages.h"
#include "base/errors.h"
#include "core/device.h"
#include "core/memory.h"

namespace geodl {

namespace {

// The batch-size probe for this run: its model, samples, precision, device and budget.
BatchProbeOptions probeOptions(const TrainOptions& options, const TrainPlan& plan, const TrainResult& result) {
  BatchProbeOptions probe;
  probe.model = options.model;
  probe.checkpoint = plan.spec.checkpoint;
  probe.precision = plan.precision;
  probe.sample_size = plan.trn.metadata.sample_size;
  probe.bands = plan.spec.bands;
  probe.classes = plan.spec.classes;
  probe.device = plan.device_name;
  probe.threads = result.threads;
  probe.budget_mib = options.run.memory_budget_mib > 0 ? options.run.memory_budget_mib : defaultMemoryBudgetMiB(plan.device_name);
  probe.max_batch = int(std::min<int64_t>(plan.n_trn, kMaxBatchSize));
  return probe;
}

}  // namespace

int chooseBatchSize(const TrainOptions& options, const TrainPlan& plan, const Checkpoint* resumed,
                    TrainResult& result, Progress& progress) {
  if (resumed) {
    const int batch = resumed->state.batch_size;
    if (options.batch_size > 0 && options.batch_size != batch)
      progress.log("resuming with the checkpoint's batch size " + std::to_string(batch) + " (not " +
                   std::to_string(options.batch_size) + "), so that the run continues as it began");
    return batch;
  }
  if (options.batch_size > 0) return options.batch_size;  // checked by the plan
  const int least = minimumTrainingBatch(plan.spec.architecture);
  const BatchProbeOptions probe = probeOptions(options, plan, result);
  progress.log("finding the largest batch that fits " + fixedText(probe.budget_mib, 0) + " MiB...");
  SubProgress probe_progress(progress, 0.0, 0.0);
  const BatchProbeResult found = probeMaxBatch(probe, probe_progress);
  if (found.max_batch < least)
    throw InputError(std::string(least == 1 ? "not even one sample" : "not even a batch of " + std::to_string(least)) +
                     " of " + std::to_string(probe.sample_size) + " pixels fits the memory budget of " + fixedText(probe.budget_mib, 0) +
                     " MiB; raise memory_budget_mib, turn checkpointing on, or use smaller samples");
  result.batch_size_probed = true;
  progress.log("batch size " + std::to_string(found.max_batch) + " (automatic: " +
               fixedText(found.bytes_per_sample / (1024.0 * 1024.0), 1) + " MiB per sample, " +
               fixedText(probe.budget_mib, 0) + " MiB budget" + (found.confirmed ? ", confirmed by a step" : "") + ")");
  return found.max_batch;
}

// checkpoint auto: on only when the batch would not fit the memory budget without it (two
// measured steps at small batches give the line; a chosen batch size fits by construction).
bool chooseCheckpointing(const TrainOptions& options, const TrainPlan& plan, const TrainResult& result,
                         Progress& progress) {
  if (options.checkpoint != "auto" || plan.spec.checkpoint) return plan.spec.checkpoint;
  if (result.batch_size_probed) {
    progress.log("checkpointing off (automatic: the batch size was chosen to fit without it)");
    return false;
  }
  BatchProbeOptions probe = probeOptions(options, plan, result);
  probe.confirm = false;
  probe.max_batch = 2 * result.batch_size;  // far enough to decide, and no large step measured
  SubProgress probe_progress(progress, 0.0, 0.0);
  const BatchProbeResult found = probeMaxBatch(probe, probe_progress);
  const double need_mib = (found.fixed_bytes + found.bytes_per_sample * result.batch_size) / (1024.0 * 1024.0);
  const bool on = found.max_batch < result.batch_size;
  progress.log(std::string(on ? "checkpointing on" : "checkpointing off") + " (automatic: a batch of " +
               std::to_string(result.batch_size) + " needs about " + fixedText(need_mib, 0) + " MiB without it, " +
               (on ? "more than" : "within") + " the budget of " + fixedText(probe.budget_mib, 0) + " MiB)");
  return on;
}

}  // namespace geodl
