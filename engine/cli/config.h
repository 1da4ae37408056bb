// geo-deep-learning's config.yaml read through the option tables (app/options.h).
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <string>
#include <vector>

#include "app/classify.h"
#include "app/create_samples.h"
#include "app/options.h"
#include "app/train.h"
#include "cli/option_flags.h"

namespace geodl::cli {

// Loads a YAML config, anchors and merge keys (`<<: *anchor`) resolved. Throws InputError
// with the line and column of a syntax error, and for a file that is empty or not a map of
// sections.
YAML::Node loadConfig(const std::string& path);

// Keys of the config that no option table knows, as dotted paths (e.g. "sample.sampels_dist").
std::vector<std::string> unknownKeys(const YAML::Node& config);

// One line per key that will not be used: unknown keys (with the valid keys of their
// section) and geo-deep-learning's keys that have no effect in GeoDL (with the reason).
std::vector<std::string> configWarnings(const YAML::Node& config);

// The values a config gives for the options of `infos`: each option's key, else its first
// alias present; null values are absent. Relative paths are taken from the config's folder;
// `model` replaces the * of models.*.x keys.
OptionValues configValues(const YAML::Node& config, const std::vector<const OptionInfo*>& infos,
                          const std::string& config_path, const std::string& model = "");

template <class Options>
OptionValues configValues(const YAML::Node& config, const OptionTable<Options>& table,
                          const std::string& config_path, const std::string& model = "") {
  std::vector<const OptionInfo*> infos;
  for (const auto& o : table) infos.push_back(&o);
  return configValues(config, infos, config_path, model);
}

// The model whose models.<name> section applies: `given` (the command line's) when set,
// else global.model_name, else the default model.
std::string configModelName(const YAML::Node& config, const std::string& given = "");

// A job's options as `geodl` builds them: defaults < the config's values (when a config is
// given) < the flags given. `warn` gets a line per config key that will not be used.
template <class Options>
Options layeredOptions(const OptionTable<Options>& table, const std::string& config_path, const OptionFlags& flags,
                       const std::function<void(const std::string&)>& warn = {}) {
  OptionValues values;
  if (!config_path.empty()) {
    const YAML::Node config = loadConfig(config_path);
    if (warn)
      for (const auto& line : configWarnings(config)) warn(line);
    values = configValues(config, table, config_path, configModelName(config, flags.given("model")));
  }
  for (const auto& [name, value] : flags.values()) values[name] = value;
  Options options;
  applyOptions(table, values, options);
  return options;
}

// The jobs from a config alone (the command line adds its values to configValues' before
// applying them). Each checks the job's options (checkSampleOptions, checkTrainOptions).
SampleOptions sampleOptionsFromConfig(const YAML::Node& config, const std::string& config_path);
TrainOptions trainOptionsFromConfig(const YAML::Node& config, const std::string& config_path);
ClassifyJob classifyJobFromConfig(const YAML::Node& config, const std::string& config_path);

}  // namespace geodl::cli
