#include "cli/config.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/errors.h"

namespace geodl::cli {

namespace fs = std::filesystem;

namespace {

// Resolves YAML merge keys, which yaml-cpp 0.7 reads as ordinary "<<" keys.
YAML::Node resolveMerges(const YAML::Node& node) {
  if (node.IsSequence()) {
    YAML::Node out(YAML::NodeType::Sequence);
    for (const auto& item : node) out.push_back(resolveMerges(item));
    return out;
  }
  if (!node.IsMap()) return node;
  YAML::Node out(YAML::NodeType::Map);
  for (const auto& kv : node) {
    if (kv.first.Scalar() == "<<") continue;
    out[kv.first.Scalar()] = resolveMerges(kv.second);
  }
  if (node["<<"]) {
    std::vector<YAML::Node> sources;
    if (node["<<"].IsSequence())
      for (const auto& s : node["<<"]) sources.push_back(s);
    else
      sources.push_back(node["<<"]);
    for (const auto& source : sources) {
      const YAML::Node merged = resolveMerges(source);
      if (!merged.IsMap()) continue;
      for (const auto& kv : merged)
        if (!out[kv.first.Scalar()]) out[kv.first.Scalar()] = kv.second;
    }
  }
  return out;
}

const std::map<std::string, std::set<std::string>>& knownKeys() {
  static const std::map<std::string, std::set<std::string>> keys = {
      {"global", {"samples_size", "num_classes", "data_path", "number_of_bands", "model_name",
                  "bucket_name", "task", "num_gpus", "debug_mode", "seed"}},
      {"sample", {"prep_csv_file", "samples_dist", "remove_background", "mask_input_image",
                  "min_annotated_percent", "mask_reference", "ignore_values", "val_percent",
                  "unlabelled_ignored"}},
      {"training", {"output_path", "num_trn_samples", "num_val_samples", "num_tst_samples",
                    "batch_size", "num_epochs", "learning_rate", "weight_decay", "step_size",
                    "gamma", "class_weights", "batch_metrics", "target_size", "ignore_index",
                    "augmentation", "rotate_limit", "rotate_prob", "hflip_prob", "vflip_prob",
                    "patience", "threads", "device", "seed", "deterministic", "checkpoint",
                    "memory_budget_mib"}},
      {"models", {"unet", "unetsmall", "checkpointed_unet", "ternausnet"}},
      {"inference", {"img_csv_file", "working_folder", "state_dict_path", "chunk_size",
                     "overlap", "batch_size", "device", "tta", "probabilities", "vector"}},
  };
  return keys;
}

std::string resolvePath(const std::string& value, const fs::path& base) {
  if (value.empty()) return value;
  fs::path p(value);
  return (p.is_absolute() ? p : base / p).lexically_normal().string();
}

template <typename T>
T get(const YAML::Node& config, const char* section, const char* key, const T& fallback) {
  const YAML::Node node = config[section] ? config[section][key] : YAML::Node();
  if (!node || node.IsNull()) return fallback;
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    throw InputError(std::string("the config key ") + section + "." + key + " has the value '" +
                     YAML::Dump(node) + "', which is not a valid " +
                     (std::is_same<T, bool>::value ? "boolean" :
                      std::is_same<T, std::string>::value ? "string" : "number"));
  }
}

std::vector<std::string> splitCsvLine(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(field);
      field.clear();
    } else if (c != '\r') {
      field += c;
    }
  }
  fields.push_back(field);
  for (auto& f : fields) {
    const auto b = f.find_first_not_of(" \t"), e = f.find_last_not_of(" \t");
    f = b == std::string::npos ? "" : f.substr(b, e - b + 1);
  }
  return fields;
}

}  // namespace

YAML::Node loadConfig(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw IoError("cannot read the config file '" + path + "'");
  try {
    return resolveMerges(YAML::Load(file));
  } catch (const YAML::ParserException& e) {
    throw InputError("the config file '" + path + "' is not valid YAML: line " +
                     std::to_string(e.mark.line + 1) + ", column " +
                     std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

std::vector<std::string> unknownKeys(const YAML::Node& config) {
  std::vector<std::string> unknown;
  if (!config.IsMap()) return unknown;
  const auto& known = knownKeys();
  for (const auto& section : config) {
    const std::string name = section.first.Scalar();
    auto it = known.find(name);
    if (it == known.end()) {
      unknown.push_back(name);
      continue;
    }
    if (!section.second.IsMap()) continue;
    for (const auto& kv : section.second) {
      const std::string key = kv.first.Scalar();
      if (!it->second.count(key)) {
        unknown.push_back(name + "." + key);
      } else if (name == "models" && kv.second.IsMap()) {
        for (const auto& opt : kv.second) {
          const std::string o = opt.first.Scalar();
          if (o != "dropout" && o != "probability" && o != "pretrained" && o != "checkpoint")
            unknown.push_back(name + "." + key + "." + o);
        }
      }
    }
  }
  return unknown;
}

std::vector<SampleSource> readPrepCsv(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw IoError("cannot read the prep CSV '" + path + "'");
  const fs::path base = fs::absolute(fs::path(path)).parent_path();
  std::vector<SampleSource> sources;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto fields = splitCsvLine(line);
    if (fields.size() != 4)
      throw InputError("line " + std::to_string(number) + " of '" + path + "' has " +
                       std::to_string(fields.size()) +
                       " columns; each line needs 4: image, vector, attribute, dataset "
                       "(trn, val or tst)");
    SampleSource s;
    s.raster = resolvePath(fields[0], base);
    s.vector = resolvePath(fields[1], base);
    s.field = fields[2];
    s.split = fields[3];
    if (s.split != "trn" && s.split != "val" && s.split != "tst")
      throw InputError("line " + std::to_string(number) + " of '" + path + "': dataset '" +
                       s.split + "' is not trn, val or tst");
    sources.push_back(s);
  }
  if (sources.empty()) throw InputError("the prep CSV '" + path + "' has no line");
  return sources;
}

SampleOptions sampleOptionsFromConfig(const YAML::Node& config, const std::string& config_path) {
  const fs::path base = fs::absolute(fs::path(config_path)).parent_path();
  SampleOptions o;
  o.sample_size = get<int>(config, "global", "samples_size", o.sample_size);
  o.num_classes = get<int>(config, "global", "num_classes", 0);
  o.bands = get<int>(config, "global", "number_of_bands", 0);
  const std::string data_path = resolvePath(get<std::string>(config, "global", "data_path", ""), base);
  if (data_path.empty()) throw InputError("the config has no global.data_path");
  o.output_folder = (fs::path(data_path) / "samples").string();
  const std::string csv = resolvePath(get<std::string>(config, "sample", "prep_csv_file", ""), base);
  if (csv.empty()) throw InputError("the config has no sample.prep_csv_file");
  o.sources = readPrepCsv(csv);
  o.stride = get<int>(config, "sample", "samples_dist", o.stride);
  o.remove_background = get<bool>(config, "sample", "remove_background", false);
  o.mask_input_image = get<bool>(config, "sample", "mask_input_image", false);
  o.mask_reference = get<bool>(config, "sample", "mask_reference", false);
  o.min_annotated_percent = get<double>(config, "sample", "min_annotated_percent", 0.0);
  o.unlabelled_ignored = get<bool>(config, "sample", "unlabelled_ignored", false);
  const YAML::Node ignored = config["sample"] ? config["sample"]["ignore_values"] : YAML::Node();
  if (ignored && ignored.IsSequence())
    for (const auto& v : ignored) o.ignored_values.push_back(v.Scalar());
  else if (ignored && ignored.IsScalar())
    o.ignored_values.push_back(ignored.Scalar());
  return o;
}

}  // namespace geodl::cli
