// The options of the batch-size probe (core/batch_probe.h), declared once (see app/options.h).
#pragma once

#include "app/options.h"
#include "core/batch_probe.h"

namespace geodl {

const OptionTable<BatchProbeOptions>& batchProbeOptionTable();

// The batch-size question as a job: the options checked by their table, then probeMaxBatch.
BatchProbeResult estimateBatchSize(const BatchProbeOptions& options, Progress& progress);

}  // namespace geodl
