// Accuracy of a class raster against vector ground truth: the confusion matrix and its
// scores (per-class IoU, precision, recall, F1, mean IoU, pixel accuracy).
#pragma once

#include <string>
#include <vector>

#include "app/options.h"
#include "core/metrics.h"
#include "base/progress.h"

namespace geodl {

struct EvaluateOptions {
  std::string classes;  // a class raster (e.g. from classify), nodata 255 not counted
  std::string truth;    // polygons; pixels under none are the background (class 0)
  std::string layer;    // empty: the first
  std::string field = "class";  // integer ids, or names matched to the raster's categories
};

struct EvaluateResult {
  SegmentationMetrics metrics;       // index = class id
  std::vector<std::string> names;    // per class id, from the raster's categories
};

// Rasterizes the truth on the class raster's grid, window by window (bounded memory).
EvaluateResult evaluate(const EvaluateOptions& options, Progress& progress);

// The options of `geodl evaluate` (the class raster and the truth are its arguments).
const OptionTable<EvaluateOptions>& evaluateOptionTable();

}  // namespace geodl
