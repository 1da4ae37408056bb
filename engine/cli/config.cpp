#include "cli/config.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "app/batch_probe_options.h"
#include "base/errors.h"
#include "core/model_spec.h"

namespace geodl::cli {

namespace fs = std::filesystem;

namespace {

// A GeoDL config has a few hundred values; aliases nested in aliases (a "billion laughs")
// expand exponentially, and reading them hung for minutes.
constexpr size_t kMaxConfigValues = 100000;

// Resolves YAML merge keys, which yaml-cpp 0.7 reads as ordinary "<<" keys, and aliases (a
// copy each), refusing a key given twice in one map and a config that expands beyond
// kMaxConfigValues values.
class ConfigResolver {
 public:
  explicit ConfigResolver(const std::string& path) : path_(path) {}

  // Counts the values `node` expands to, without copying them (building yaml-cpp's nodes is
  // slow: 100000 of them took seconds), and refuses beyond kMaxConfigValues.
  void checkSize(const YAML::Node& node) {
    if (++values_ > kMaxConfigValues)
      throw InputError("the config file '" + path_ + "' expands to more than " + std::to_string(kMaxConfigValues) +
                       " values (YAML aliases nested in aliases?); a GeoDL config has a few hundred: write the "
                       "values out instead of aliasing them");
    if (node.IsSequence())
      for (const auto& item : node) checkSize(item);
    else if (node.IsMap())
      for (const auto& kv : node) checkSize(kv.second);
  }

  // Call checkSize first.
  YAML::Node resolve(const YAML::Node& node, const std::string& where) {
    if (node.IsSequence()) {
      YAML::Node out(YAML::NodeType::Sequence);
      for (const auto& item : node) out.push_back(resolve(item, where));
      return out;
    }
    if (!node.IsMap()) return node;
    YAML::Node out(YAML::NodeType::Map);
    std::map<std::string, int> lines;
    for (const auto& kv : node) {
      const std::string key = kv.first.Scalar();
      if (key == "<<") continue;
      const std::string at = where.empty() ? key : where + "." + key;
      if (const auto it = lines.find(key); it != lines.end())
        throw InputError("the config file '" + path_ + "' gives " + at + " twice (lines " + std::to_string(it->second) +
                         " and " + std::to_string(kv.first.Mark().line + 1) + "); keep one of them");
      lines[key] = kv.first.Mark().line + 1;
      out[key] = resolve(kv.second, at);
    }
    if (node["<<"]) {
      std::vector<YAML::Node> sources;
      if (node["<<"].IsSequence())
        for (const auto& s : node["<<"]) sources.push_back(s);
      else
        sources.push_back(node["<<"]);
      for (const auto& source : sources) {
        const YAML::Node merged = resolve(source, where);
        if (!merged.IsMap()) continue;
        for (const auto& kv : merged)
          if (!out[kv.first.Scalar()]) out[kv.first.Scalar()] = kv.second;
      }
    }
    return out;
  }

 private:
  std::string path_;
  size_t values_ = 0;
};

std::vector<std::string> splitKey(const std::string& key) {
  std::vector<std::string> parts;
  std::stringstream in(key);
  for (std::string part; std::getline(in, part, '.');) parts.push_back(part);
  return parts;
}

// Every config key of every job, and the keys without effect.
const std::vector<std::string>& knownKeys() {
  static const std::vector<std::string> keys = [] {
    std::set<std::string> all;
    const auto add = [&](const auto& table) {
      for (const auto& o : table) {
        if (!o.key.empty()) all.insert(o.key);
        for (const auto& a : o.aliases) all.insert(a);
      }
    };
    add(sampleOptionTable());
    add(trainOptionTable());
    add(classifyOptionTable());
    add(batchProbeOptionTable());
    for (const auto& k : ignoredConfigKeys()) all.insert(k.key);
    return std::vector<std::string>(all.begin(), all.end());
  }();
  return keys;
}

bool segmentMatches(const std::string& pattern, const std::string& segment) {
  if (pattern != "*") return pattern == segment;
  const auto& names = modelNames();
  return std::find(names.begin(), names.end(), segment) != names.end();
}

// How `path` stands to the known keys: a key, the start of some (a section), or neither.
enum class KeyMatch { None, Section, Key };
KeyMatch matchKey(const std::vector<std::string>& path) {
  KeyMatch best = KeyMatch::None;
  for (const auto& key : knownKeys()) {
    const auto parts = splitKey(key);
    if (parts.size() < path.size()) continue;
    bool prefix = true;
    for (size_t i = 0; i < path.size() && prefix; ++i) prefix = segmentMatches(parts[i], path[i]);
    if (!prefix) continue;
    if (parts.size() == path.size()) return KeyMatch::Key;
    best = KeyMatch::Section;
  }
  return best;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ".") + p;
  return out;
}

void collectUnknown(const YAML::Node& node, std::vector<std::string>& path, std::vector<std::string>& out) {
  for (const auto& kv : node) {
    path.push_back(kv.first.Scalar());
    const KeyMatch m = matchKey(path);
    if (m == KeyMatch::None || (m == KeyMatch::Section && !kv.second.IsMap() && !kv.second.IsNull()))
      out.push_back(join(path));
    else if (m == KeyMatch::Section && kv.second.IsMap())
      collectUnknown(kv.second, path, out);
    path.pop_back();
  }
}

// The keys directly under a section ("sample"), as a config writes them.
std::string keysOfSection(const std::string& section) {
  std::set<std::string> names;
  const auto depth = splitKey(section).size();
  for (const auto& key : knownKeys()) {
    const auto parts = splitKey(key);
    if (parts.size() <= depth || join({parts.begin(), parts.begin() + long(depth)}) != section) continue;
    names.insert(parts[depth]);
  }
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

YAML::Node lookupParts(const YAML::Node& node, const std::vector<std::string>& parts, size_t i,
                       const std::string& model) {
  if (i == parts.size()) return node;
  const std::string& part = parts[i] == "*" ? model : parts[i];
  if (!node.IsMap() || part.empty()) return YAML::Node();
  const YAML::Node next = node[part];
  if (!next) return YAML::Node();
  return lookupParts(next, parts, i + 1, model);
}

// The node of a dotted key ("training.augmentation.rotate_limit"); null or undefined when absent.
YAML::Node lookup(const YAML::Node& config, const std::string& key, const std::string& model) {
  return lookupParts(config, splitKey(key), 0, model);
}

}  // namespace

YAML::Node loadConfig(const std::string& path) {
  // A FIFO or a device would block the read, or never end.
  if (std::error_code e; fs::exists(path, e) && !fs::is_regular_file(path, e))
    throw InputError("the config file '" + path + "' is " +
                     (fs::is_directory(path, e) ? std::string("a folder") : std::string("not a regular file (a FIFO, socket or device)")) +
                     "; give a YAML file");
  std::ifstream file(path);
  if (!file)
    throw IoError("cannot read the config file '" + path + "': " +
                  (std::filesystem::exists(path) ? std::string("no permission, or it is a folder; give a readable YAML file")
                                                 : std::string("it does not exist; check the path")));
  YAML::Node config;
  try {
    ConfigResolver resolver(path);
    const YAML::Node read = YAML::Load(file);
    resolver.checkSize(read);
    config = resolver.resolve(read, "");
  } catch (const YAML::ParserException& e) {
    throw InputError("the config file '" + path + "' is not valid YAML: line " +
                     std::to_string(e.mark.line + 1) + ", column " +
                     std::to_string(e.mark.column + 1) + ": " + e.msg + "; fix it there (an editor with YAML "
                     "highlighting shows where)");
  }
  if (!config || config.IsNull())
    throw InputError("the config file '" + path + "' is empty; it needs sections such as global, "
                     "sample, training, inference (see docs/options.md)");
  if (!config.IsMap())
    throw InputError("the config file '" + path + "' is not a map of sections (global:, sample:, "
                     "training:, inference:) but a " + (config.IsSequence() ? "list" : "single value"));
  return config;
}

std::vector<std::string> unknownKeys(const YAML::Node& config) {
  std::vector<std::string> unknown, path;
  if (config.IsMap()) collectUnknown(config, path, unknown);
  return unknown;
}

std::vector<std::string> configWarnings(const YAML::Node& config) {
  std::vector<std::string> lines;
  for (const auto& key : unknownKeys(config)) {
    const auto parts = splitKey(key);
    const std::string section = join({parts.begin(), parts.end() - 1});
    const std::string valid = section.empty() ? "global, sample, training, models, inference"
                                              : keysOfSection(section);
    lines.push_back("unknown config key '" + key + "' is ignored; the keys of " +
                    (section.empty() ? std::string("a config") : section) + " are: " + valid);
  }
  for (const auto& ignored : ignoredConfigKeys())
    if (const YAML::Node node = lookup(config, ignored.key, ""); node && !node.IsNull())
      lines.push_back(std::string("config key '") + ignored.key + "' has no effect in GeoDL: " + ignored.reason);
  return lines;
}

OptionValues configValues(const YAML::Node& config, const std::vector<const OptionInfo*>& infos,
                          const std::string& config_path, const std::string& model) {
  const std::string base = fs::absolute(fs::path(config_path)).parent_path().string();
  OptionValues values;
  for (const OptionInfo* info : infos) {
    if (info->key.empty()) continue;
    std::vector<std::string> keys{info->key};
    keys.insert(keys.end(), info->aliases.begin(), info->aliases.end());
    for (const auto& key : keys) {
      const YAML::Node node = lookup(config, key, model);
      if (!node || node.IsNull()) continue;
      std::string shown = key;
      if (key.find('*') != std::string::npos) shown.replace(shown.find('*'), 1, model);
      OptionValue v;
      v.base = base;
      v.origin = "the config key " + shown;
      if (node.IsMap())
        throw InputError(v.origin + " is a section, but it takes " + describeExpected(*info));
      if (node.IsSequence()) {
        v.list = true;
        for (const auto& item : node) {
          if (!item.IsScalar())
            throw InputError(v.origin + " holds a list of lists or sections, but it takes " +
                             describeExpected(*info));
          v.items.push_back(item.Scalar());
        }
      } else {
        v.items.push_back(node.Scalar());
      }
      values[info->name] = v;
      break;
    }
  }
  return values;
}

std::string configModelName(const YAML::Node& config, const std::string& given) {
  if (!given.empty()) return given;
  const YAML::Node name = lookup(config, "global.model_name", "");
  if (name && name.IsScalar()) return name.Scalar();
  return TrainOptions{}.model;
}

SampleOptions sampleOptionsFromConfig(const YAML::Node& config, const std::string& config_path) {
  SampleOptions o;
  applyOptions(sampleOptionTable(), configValues(config, sampleOptionTable(), config_path), o);
  checkSampleOptions(o);
  return o;
}

TrainOptions trainOptionsFromConfig(const YAML::Node& config, const std::string& config_path) {
  TrainOptions o;
  applyOptions(trainOptionTable(),
               configValues(config, trainOptionTable(), config_path, configModelName(config)), o);
  checkTrainOptions(o);
  return o;
}

ClassifyJob classifyJobFromConfig(const YAML::Node& config, const std::string& config_path) {
  ClassifyJob job;
  applyOptions(classifyOptionTable(), configValues(config, classifyOptionTable(), config_path), job);
  return job;
}

}  // namespace geodl::cli
