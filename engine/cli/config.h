// geo-deep-learning's config.yaml and prep CSV, read into the engine's options structs.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "app/create_samples.h"

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

}  // namespace geodl::cli
