// The options of the batch-size probe (core/batch_probe.h), declared once (see app/options.h).
#pragma once

#include "app/options.h"
#include "core/batch_probe.h"

namespace geodl {

const OptionTable<BatchProbeOptions>& batchProbeOptionTable();

}  // namespace geodl
