#include "model/model_info.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

#include "base/errors.h"

namespace geodl {

using nlohmann::json;

namespace {

json parseObject(const std::string& text, const char* what) {
  if (text.empty()) return json::object();
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(std::string("the model file's ") + what + " is not valid JSON: " + e.what());
  }
}

template <typename T>
T field(const json& j, const char* key) {
  if (!j.contains(key))
    throw InputError(std::string("the model file's metadata has no '") + key +
                     "': it was not written by GeoDL or is damaged");
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw InputError(std::string("the model file's metadata has a malformed '") + key + "'");
  }
}

}  // namespace

std::string toJson(const ModelInfo& info, int indent) {
  json classes = json::array();
  for (const auto& c : info.classes)
    classes.push_back({{"id", c.id}, {"name", c.name}, {"colour", c.colour}});
  json j = {
      {"format", "geodl-model"},
      {"format_version", info.format_version},
      {"engine_version", info.engine_version},
      {"created", info.created},
      {"model_name", info.model_name},
      {"architecture", architectureName(info.spec.architecture)},
      {"bands", info.spec.bands},
      {"num_classes", info.spec.classes},
      {"dropout", info.spec.dropout},
      {"dropout_probability", info.spec.dropout_probability},
      {"checkpoint", info.spec.checkpoint},
      {"pretrained", info.spec.pretrained},
      {"sample_size", info.sample_size},
      {"data_type", info.data_type},
      {"band_mean", info.band_mean},
      {"band_std", info.band_std},
      {"band_min", info.band_min},
      {"band_max", info.band_max},
      {"wavelengths", info.spec.wavelengths},
      {"classes", classes},
      {"ignore_index", info.ignore_index},
      {"crs_wkt", info.crs_wkt},
      {"pixel_size", {info.pixel_size_x, info.pixel_size_y}},
      {"epochs_trained", info.epochs_trained},
      {"best_epoch", info.best_epoch},
      {"best_metric", info.best_metric},
      {"metrics", parseObject(info.metrics_json, "metrics")},
      {"training", parseObject(info.training_json, "training record")},
  };
  return j.dump(indent);
}

ModelInfo modelInfoFromJson(const std::string& text) {
  const json j = parseObject(text, "metadata");
  if (!j.is_object() || j.value("format", "") != "geodl-model")
    throw InputError("the file holds no GeoDL model metadata");
  ModelInfo info;
  info.format_version = field<int>(j, "format_version");
  if (info.format_version > ModelInfo::kFormatVersion)
    throw InputError("the model file has format version " + std::to_string(info.format_version) +
                     ", newer than this GeoDL reads (" +
                     std::to_string(ModelInfo::kFormatVersion) + "); update GeoDL");
  info.engine_version = j.value("engine_version", "");
  info.created = j.value("created", "");
  info.model_name = field<std::string>(j, "model_name");
  info.spec = modelSpecFromName(field<std::string>(j, "architecture"));
  info.spec.bands = field<int>(j, "bands");
  info.spec.classes = field<int>(j, "num_classes");
  info.spec.dropout = j.value("dropout", false);
  info.spec.dropout_probability = j.value("dropout_probability", 0.5);
  info.spec.checkpoint = j.value("checkpoint", false);
  info.spec.pretrained = j.value("pretrained", "");
  // The bands' wavelengths: in files since GeoDL recorded them (older ones: not known).
  info.spec.wavelengths = j.value("wavelengths", std::vector<double>{});
  info.sample_size = field<int>(j, "sample_size");
  info.data_type = j.value("data_type", "");
  info.band_mean = field<std::vector<double>>(j, "band_mean");
  info.band_std = field<std::vector<double>>(j, "band_std");
  // The value range: in files since GeoDL recorded it (older ones: no range to compare).
  info.band_min = j.value("band_min", std::vector<double>{});
  info.band_max = j.value("band_max", std::vector<double>{});
  for (const auto& c : field<json>(j, "classes"))
    info.classes.push_back({c.value("id", 0), c.value("name", ""), c.value("colour", "")});
  info.ignore_index = j.value("ignore_index", 255);
  info.crs_wkt = j.value("crs_wkt", "");
  const auto pixel = j.value("pixel_size", std::vector<double>{0, 0});
  if (pixel.size() == 2) {
    info.pixel_size_x = pixel[0];
    info.pixel_size_y = pixel[1];
  }
  info.epochs_trained = j.value("epochs_trained", 0);
  info.best_epoch = j.value("best_epoch", 0);
  info.best_metric = j.value("best_metric", "");
  info.metrics_json = j.contains("metrics") ? j["metrics"].dump() : "{}";
  info.training_json = j.contains("training") ? j["training"].dump() : "{}";
  if (int(info.band_mean.size()) != info.spec.bands || int(info.band_std.size()) != info.spec.bands)
    throw InputError("the model file's normalization has " + std::to_string(info.band_mean.size()) +
                     " values for " + std::to_string(info.spec.bands) + " bands: the file is damaged");
  if (info.band_min.size() != info.band_max.size() ||
      (!info.band_min.empty() && int(info.band_min.size()) != info.spec.bands))
    throw InputError("the model file's value range has " + std::to_string(info.band_min.size()) + " and " +
                     std::to_string(info.band_max.size()) + " values for " + std::to_string(info.spec.bands) +
                     " bands: the file is damaged");
  if (int(info.classes.size()) != info.spec.classes)
    throw InputError("the model file names " + std::to_string(info.classes.size()) +
                     " classes for a model of " + std::to_string(info.spec.classes) +
                     ": the file is damaged");
  validate(info.spec);
  return info;
}

std::string defaultClassColour(const std::string& name, int index) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  const auto has = [&](const char* word) { return n.find(word) != std::string::npos; };
  if (has("background") || n == "0" || has("other")) return "#d9d9d9";
  if (has("build") || has("roof") || has("house")) return "#e31a1c";
  if (has("road") || has("street") || has("pave") || has("asphalt")) return "#636363";
  if (has("water") || has("river") || has("lake") || has("sea")) return "#1f78b4";
  if (has("veget") || has("forest") || has("tree") || has("wood")) return "#33a02c";
  if (has("grass") || has("crop") || has("field") || has("agri")) return "#b2df8a";
  if (has("bare") || has("soil") || has("sand")) return "#fdbf6f";
  static const char* palette[] = {"#d9d9d9", "#e31a1c", "#1f78b4", "#33a02c", "#ff7f00",
                                  "#6a3d9a", "#b15928", "#a6cee3", "#fb9a99", "#b2df8a",
                                  "#fdbf6f", "#cab2d6", "#ffff99", "#636363"};
  return palette[size_t(index) % (sizeof(palette) / sizeof(palette[0]))];
}

}  // namespace geodl
