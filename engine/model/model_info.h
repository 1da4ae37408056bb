// What a GeoDL model file says about its model besides the weights: everything
// classification needs (architecture, bands, normalization, classes, sample size, the
// training data's CRS and pixel size) and the record of how it was trained.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model_spec.h"

namespace geodl {

struct ModelClass {
  int id = 0;              // the value written in class rasters
  std::string name;
  std::string colour;      // "#rrggbb"
};

struct ModelInfo {
  static constexpr int kFormatVersion = 1;
  int format_version = kFormatVersion;
  std::string engine_version;
  std::string created;        // UTC, ISO 8601
  std::string model_name;     // as configured (e.g. checkpointed_unet)
  ModelSpec spec;             // architecture and options; spec.pretrained: what training started from
  int sample_size = 0;        // training samples' height and width
  std::string data_type;      // GDAL name of the training rasters' pixel type
  std::vector<double> band_mean, band_std;  // input = (pixel - mean) / std, per band
  std::vector<double> band_min, band_max;   // the training samples' value range (empty: unknown)
  std::vector<ModelClass> classes;          // index = output channel
  int ignore_index = 255;
  std::string crs_wkt;        // of the training data ("" when unknown)
  double pixel_size_x = 0, pixel_size_y = 0;  // map units per pixel (0 when unknown)
  int epochs_trained = 0;
  int best_epoch = 0;         // 1-based; 0 before any validation
  std::string best_metric;    // "loss" or "miou"
  std::string metrics_json;   // the best epoch's validation metrics (JSON object)
  std::string training_json;  // the training options (JSON object)
};

// The metadata as one JSON document (pretty when indent >= 0), and back. fromJson throws
// InputError naming the missing or malformed field.
std::string toJson(const ModelInfo& info, int indent = -1);
ModelInfo modelInfoFromJson(const std::string& json);

// The metadata of a model file or training checkpoint, without building the model (the
// file is read with LibTorch: implemented in model_file.cpp). Throws InputError.
ModelInfo readModelInfo(const std::string& path);

// The metadata when `path` is a GeoDL model file or training checkpoint (a LibTorch archive
// with GeoDL metadata), nothing when it is not (missing, TorchScript, anything else).
// Throws InputError only for a GeoDL file whose metadata is damaged.
std::optional<ModelInfo> tryReadModelInfo(const std::string& path);

// Whether `path` is a LibTorch archive with GeoDL metadata: a model file or checkpoint.
bool isModelFile(const std::string& path);

// A default colour for a class: well-known names (building, road, water, vegetation...)
// get their usual map colours, others a fixed palette by index.
std::string defaultClassColour(const std::string& name, int index);

}  // namespace geodl
