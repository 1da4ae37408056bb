// A training run's record for people: metrics.csv (one row per epoch) and report.html
// (loss and IoU curves as inline SVG, the best epoch's per-class table, where time went).
#pragma once

#include <string>

#include "app/train_result.h"

namespace geodl {

std::string metricsCsv(const TrainResult& result);
std::string trainingReportHtml(const TrainResult& result);

}  // namespace geodl
