// The stages of createSamples() (app/create_samples.h), for create_samples.cpp and the file
// beside it; not part of the job's interface. 1. the plan (create_samples_plan.cpp): rasters,
// labels and windows, checked before anything is written; 2. the windows read, masked and
// written to the stores, shared by the ranks (create_samples.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/create_samples.h"
#include "io/labels.h"
#include "io/raster.h"

namespace geodl {

// The splits a store is written for, in order.
inline const std::vector<std::string> kSplits = {"trn", "val", "tst"};

struct Window {
  size_t source = 0;
  int x = 0, y = 0;
  std::string split;
};

// Window origins along one axis: every `stride` pixels, the last one reaching the edge.
using Rasters = std::vector<std::unique_ptr<io::RasterReader>>;
using Labels = std::vector<std::unique_ptr<io::LabelRasterizer>>;


// Where a split's store goes (output_folder/SPLIT_samples.hdf5), and the footprint layer.
std::string storePath(const SampleOptions& options, const std::string& split);
std::string footprintPath(const SampleOptions& options);

// Every raster opened and checked against the options and the others.
Rasters openRasters(const SampleOptions& options);
// The data type all rasters share (the stores hold one).
std::string sharedDataType(const Rasters& rasters);
// Each label file read once, string classes numbered alike in all; the classes in `result`.
Labels openLabels(const SampleOptions& options, const Rasters& rasters, SampleResult& result);
// Every window of every raster, with its split.
std::vector<Window> planWindows(const SampleOptions& options, const Rasters& rasters);

}  // namespace geodl
