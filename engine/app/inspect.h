// What a GeoDL file holds, for `geodl info` (as GDAL's gdalinfo is a thin shell over its
// library's GDALInfo()): a model file or checkpoint, read and checked, or a sample store, in
// typed fields; the shell only prints them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/sample_store.h"
#include "model/model_info.h"

namespace geodl {

// The best epoch's validation metrics a model file records.
struct RecordedMetrics {
  bool present = false;
  double mean_iou = 0, pixel_accuracy = 0;
  std::vector<double> class_iou;  // per class of the model
};

// How the model was trained, from its training record.
struct TrainingFacts {
  int world_size = 1;    // ranks that trained it together
  int batch_size = 0;    // per rank
  int global_batch = 0;  // all ranks' together
  std::string pretrained_encoder, pretrained_encoder_digest;
};

struct Inspection {
  enum class Kind { Model, Store } kind = Kind::Model;
  std::string path;
  // A model file (or a training checkpoint): its metadata, checked against its weights.
  ModelInfo model;
  int64_t parameters = 0;
  std::string weights_digest;
  std::vector<std::string> warnings;  // e.g. a file (model or store) from before digests
  RecordedMetrics metrics;
  TrainingFacts training;
  // A sample store.
  io::StoreContents store;
};

// Reads `path` as what it is: a sample store (HDF5; its datasets checked against their
// digests) or a model file. Throws InputError for a folder or another kind of file, naming
// what to give instead, and for a damaged file.
Inspection inspect(const std::string& path);

}  // namespace geodl
