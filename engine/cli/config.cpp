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
                    "memory_budget_mib", "best_metric", "bf16", "loader_threads"}},
      {"models", {"unet", "unetsmall", "checkpointed_unet", "ternausnet"}},
      {"inference", {"img_csv_file", "working_folder", "state_dict_path", "chunk_size",
                     "overlap", "batch_size", "device", "tta", "probabilities", "vector",
                     "threads", "mask", "mask_layer"}},
  };
  return keys;
}

std::string resolvePath(const std::string& value, const fs::path& base) {
  if (value.empty()) return value;
  fs::path p(value);
  return (p.is_absolute() ? p : base / p).lexically_normal().string();
}

template <typename T>
T getNode(const YAML::Node& node, const std::string& name, const T& fallback) {
  if (!node || node.IsNull()) return fallback;
  try {
    return node.as<T>();
  } catch (const YAML::Exception&) {
    throw InputError("the config key " + name + " has the value '" + YAML::Dump(node) +
                     "', which is not a valid " +
                     (std::is_same<T, bool>::value ? "boolean" :
                      std::is_same<T, std::string>::value ? "string" : "number"));
  }
}

template <typename T>
T get(const YAML::Node& config, const char* section, const char* key, const T& fallback) {
  const YAML::Node node = config[section] ? config[section][key] : YAML::Node();
  return getNode<T>(node, std::string(section) + "." + key, fallback);
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

TrainOptions trainOptionsFromConfig(const YAML::Node& config, const std::string& config_path) {
  const fs::path base = fs::absolute(fs::path(config_path)).parent_path();
  TrainOptions o;
  o.model = get<std::string>(config, "global", "model_name", o.model);
  o.num_classes = get<int>(config, "global", "num_classes", 0);
  o.bands = get<int>(config, "global", "number_of_bands", 0);
  o.sample_size = get<int>(config, "global", "samples_size", 0);
  const std::string data_path =
      resolvePath(get<std::string>(config, "global", "data_path", ""), base);
  if (data_path.empty()) throw InputError("the config has no global.data_path");
  o.train_store = (fs::path(data_path) / "samples" / "trn_samples.hdf5").string();
  o.val_store = (fs::path(data_path) / "samples" / "val_samples.hdf5").string();
  const std::string output = get<std::string>(config, "training", "output_path", "");
  o.output_folder = output.empty() ? (fs::path(data_path) / "model").string()
                                   : resolvePath(output, base);
  o.num_trn_samples = get<int64_t>(config, "training", "num_trn_samples", -1);
  o.num_val_samples = get<int64_t>(config, "training", "num_val_samples", -1);
  const YAML::Node training = config["training"];
  const YAML::Node batch = training ? training["batch_size"] : YAML::Node();
  if (batch && batch.IsScalar() && (batch.Scalar() == "auto" || batch.Scalar() == "0"))
    o.batch_size = 0;
  else
    o.batch_size = get<int>(config, "training", "batch_size", 0);
  if (o.batch_size < 0) throw InputError("training.batch_size must be a positive number or auto");
  o.epochs = get<int>(config, "training", "num_epochs", o.epochs);
  o.learning_rate = get<double>(config, "training", "learning_rate", o.learning_rate);
  o.weight_decay = get<double>(config, "training", "weight_decay", o.weight_decay);
  o.step_size = get<int>(config, "training", "step_size", o.step_size);
  o.gamma = get<double>(config, "training", "gamma", o.gamma);
  const YAML::Node weights = training ? training["class_weights"] : YAML::Node();
  if (weights && weights.IsSequence()) {
    o.class_weighting = ClassWeighting::Given;
    for (const auto& w : weights) {
      try {
        o.class_weights.push_back(w.as<double>());
      } catch (const YAML::Exception&) {
        throw InputError("training.class_weights has the value '" + YAML::Dump(w) +
                         "', which is not a number");
      }
    }
  } else if (weights && weights.IsScalar() && weights.Scalar() == "auto") {
    o.class_weighting = ClassWeighting::Auto;
  } else if (weights && weights.IsScalar() && !weights.Scalar().empty()) {
    if (get<bool>(config, "training", "class_weights", false))
      throw InputError("training.class_weights: true does not say which weights; use auto "
                       "(from the class frequencies) or a list with one weight per class");
  }
  // Augmentation: geo-deep-learning has had the keys in training and in training.augmentation.
  const YAML::Node aug = training && training["augmentation"] && training["augmentation"].IsMap()
                             ? training["augmentation"] : YAML::Node();
  const auto augKey = [&](const char* key, double fallback) {
    if (aug && aug[key]) return getNode<double>(aug[key], std::string("training.augmentation.") + key, fallback);
    return get<double>(config, "training", key, fallback);
  };
  o.augmentation.rotate_limit = augKey("rotate_limit", 0);
  o.augmentation.rotate_prob = augKey("rotate_prob", 0);
  o.augmentation.hflip_prob = augKey("hflip_prob", 0);
  o.augmentation.vflip_prob = augKey("vflip_prob", 0);
  o.patience = get<int>(config, "training", "patience", 0);
  o.best_metric = get<std::string>(config, "training", "best_metric", o.best_metric);
  o.seed = get<int64_t>(config, "training", "seed", get<int64_t>(config, "global", "seed", -1));
  o.deterministic = get<bool>(config, "training", "deterministic", false);
  o.threads = get<int>(config, "training", "threads", 0);
  o.device = get<std::string>(config, "training", "device", o.device);
  o.bf16 = get<bool>(config, "training", "bf16", false);
  o.checkpoint = get<bool>(config, "training", "checkpoint", false);
  o.memory_budget_mib = get<double>(config, "training", "memory_budget_mib", 0);
  o.loader_threads = get<int>(config, "training", "loader_threads", 0);
  // models.<model_name>: dropout, probability, pretrained, checkpoint.
  const YAML::Node model = config["models"] ? config["models"][o.model] : YAML::Node();
  if (model && model.IsMap()) {
    const std::string section = "models." + o.model + ".";
    o.dropout = getNode<bool>(model["dropout"], section + "dropout", false);
    o.dropout_probability =
        getNode<double>(model["probability"], section + "probability", o.dropout_probability);
    o.checkpoint = o.checkpoint || getNode<bool>(model["checkpoint"], section + "checkpoint", false);
    const YAML::Node pretrained = model["pretrained"];
    if (pretrained && pretrained.IsScalar()) {
      const std::string v = pretrained.Scalar();
      const bool off = v.empty() || v == "False" || v == "false" || v == "no" || v == "None" ||
                       v == "null" || v == "~";
      if (!off) o.pretrained = resolvePath(v, base);
    }
  }
  return o;
}

std::vector<std::string> readInferenceCsv(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw IoError("cannot read the inference CSV '" + path + "'");
  const fs::path base = fs::absolute(fs::path(path)).parent_path();
  std::vector<std::string> rasters;
  std::string line;
  while (std::getline(file, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto fields = splitCsvLine(line);
    if (!fields[0].empty()) rasters.push_back(resolvePath(fields[0], base));
  }
  if (rasters.empty())
    throw InputError("the inference CSV '" + path + "' names no raster; put one raster path per "
                     "line");
  return rasters;
}

ClassifyJob classifyJobFromConfig(const YAML::Node& config, const std::string& config_path) {
  const fs::path base = fs::absolute(fs::path(config_path)).parent_path();
  ClassifyJob job;
  const std::string csv = resolvePath(get<std::string>(config, "inference", "img_csv_file", ""), base);
  if (!csv.empty()) job.inputs = readInferenceCsv(csv);
  job.working_folder = resolvePath(get<std::string>(config, "inference", "working_folder", ""), base);
  auto& o = job.options;
  o.model_path = resolvePath(get<std::string>(config, "inference", "state_dict_path", ""), base);
  o.window = get<int>(config, "inference", "chunk_size", 0);
  o.overlap = get<double>(config, "inference", "overlap", o.overlap);
  o.batch_size = get<int>(config, "inference", "batch_size", o.batch_size);
  o.device = get<std::string>(config, "inference", "device", o.device);
  o.tta = get<bool>(config, "inference", "tta", false);
  o.threads = get<int>(config, "inference", "threads", 0);
  o.mask = resolvePath(get<std::string>(config, "inference", "mask", ""), base);
  o.mask_layer = get<std::string>(config, "inference", "mask_layer", "");
  job.probabilities = get<bool>(config, "inference", "probabilities", false);
  return job;
}

}  // namespace geodl::cli
