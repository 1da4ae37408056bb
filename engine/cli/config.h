// geo-deep-learning's config.yaml and prep CSV, read into the engine's options structs.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "app/create_samples.h"
#include "app/classify.h"
#include "app/train.h"

namespace geodl::cli {

// Loads a YAML config, anchors and merge keys (`<<: *anchor`) resolved. Throws InputError
// with the line and column of a syntax error.
YAML::Node loadConfig(const std::string& path);

// Keys of the config that GeoDL does not know, as dotted paths (e.g. "sample.sampels_dist").
std::vector<std::string> unknownKeys(const YAML::Node& config);

// The prep CSV: no header; image, vector, attribute, dataset per line; paths relative to the
// CSV's folder. Throws InputError naming the line of a malformed row.
std::vector<SampleSource> readPrepCsv(const std::string& path);

// The samples job from a config: global.samples_size, num_classes, number_of_bands,
// data_path (stores go to <data_path>/samples), sample.prep_csv_file, samples_dist,
// remove_background, mask_input_image, min_annotated_percent, mask_reference, and GeoDL's
// ignore_values and unlabelled_ignored. Relative
// paths are taken from the config file's folder.
SampleOptions sampleOptionsFromConfig(const YAML::Node& config, const std::string& config_path);

// The training job from a config: global.model_name, num_classes, number_of_bands,
// samples_size, data_path (stores read from <data_path>/samples/{trn,val}_samples.hdf5);
// training.output_path (default <data_path>/model), num_trn_samples, num_val_samples,
// batch_size (a number, or auto), num_epochs, learning_rate, weight_decay, step_size, gamma,
// class_weights (false, auto or a list), the augmentation keys (rotate_limit, rotate_prob,
// hflip_prob, vflip_prob; directly under training or in training.augmentation), and
// GeoDL's patience, best_metric, seed, deterministic, threads, device, bf16, checkpoint,
// memory_budget_mib, loader_threads; models.<model_name>.dropout, probability, pretrained
// and checkpoint. Relative paths are taken from the config file's folder.
TrainOptions trainOptionsFromConfig(const YAML::Node& config, const std::string& config_path);

// The classification job from a config's inference section: img_csv_file (one raster per
// line, first column; relative to the CSV's folder), working_folder, state_dict_path (the
// model file), chunk_size (window), overlap (percent), and GeoDL's batch_size, device,
// tta, probabilities, threads. `inputs` is empty when the config names no CSV.
struct ClassifyJob {
  std::vector<std::string> inputs;
  std::string working_folder;
  bool probabilities = false;
  ClassifyOptions options;  // input and output paths left empty
};
ClassifyJob classifyJobFromConfig(const YAML::Node& config, const std::string& config_path);

// The rasters of an inference CSV (first column of each non-empty line). Throws InputError
// for a CSV without a raster.
std::vector<std::string> readInferenceCsv(const std::string& path);

}  // namespace geodl::cli
