// Stage 4 of training, its record: the options and what the run made of them, and the model's
// description, as the model file keeps them (metrics.csv and report.html: train_report.cpp).
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "app/train_stages.h"
#include "base/file_kind.h"
#include "base/metadata.h"
#include "model/model_file.h"
#include "io/sample_store.h"

namespace geodl {

using nlohmann::json;

namespace {

// The digest of a file's bytes (the pretrained encoder's, recorded in the model file); "" for
// none or one that cannot be read.
std::string fileDigest(const std::string& path) {
  if (path.empty() || fileKind(path) == FileKind::Folder || fileKind(path) == FileKind::Special) return "";
  std::ifstream file(path, std::ios::binary);
  if (!file) return "";
  uint64_t hash = kDigestStart;
  std::vector<char> buffer(1 << 20);
  while (file.read(buffer.data(), std::streamsize(buffer.size())) || file.gcount() > 0)
    addToDigest(hash, buffer.data(), size_t(file.gcount()));
  return digestText(hash);
}


}  // namespace

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::ostringstream s;
  s << std::put_time(&tm, "%Y-%m-%dT%H:%M:%SZ");
  return s.str();
}

json optionsToJson(const TrainOptions& options) {
  json record = json::object();
  for (const auto& option : trainOptionTable()) {
    if (!option.show) continue;  // an option that only sets others (data_path)
    const std::string text = option.show(options);
    json& value = record[option.name];
    switch (option.type) {
      case OptionType::Bool: value = text == "true"; break;
      case OptionType::Int: value = std::stoll(text); break;
      case OptionType::Number: value = std::stod(text); break;
      case OptionType::Choice:  // a list of numbers (class_weights) is written as JSON writes it
        value = text.size() > 1 && text.front() == '[' ? json::parse(text) : json(text);
        break;
      default: value = text;
    }
  }
  record["pretrained_encoder_digest"] = fileDigest(options.pretrained_encoder);
  record["config"] = options.config_text;
  return record;
}

json trainingRecord(const TrainOptions& options, const TrainPlan& plan, const TrainResult& result, int world_size) {
  json record = optionsToJson(options);
  record["batch_size"] = result.batch_size;
  record["seed"] = result.seed;
  record["train_samples"] = plan.n_trn;
  record["val_samples"] = plan.n_val;
  record["world_size"] = world_size;
  record["global_batch"] = result.batch_size * world_size;
  return record;
}

ModelInfo describeModel(const TrainOptions& options, const TrainPlan& plan, const TrainingBands& bands,
                        TrainResult& result) {
  const auto& tm = plan.trn.metadata;
  ModelInfo info;
  info.engine_version = metadata::kVersion;
  info.model_name = options.model;
  info.spec = plan.spec;
  info.spec.pretrained = options.pretrained;
  info.sample_size = tm.sample_size;
  info.data_type = tm.data_type;
  info.band_mean = bands.mean;
  info.band_std = bands.stdev;
  info.band_min = bands.minimum;
  info.band_max = bands.maximum;
  for (int c = 0; c < plan.spec.classes; ++c) {
    ModelClass mc;
    mc.id = c < int(tm.class_ids.size()) ? tm.class_ids[c] : c;
    mc.name = c < int(tm.class_names.size()) ? tm.class_names[c] : std::to_string(mc.id);
    mc.colour = defaultClassColour(mc.name, c);
    info.classes.push_back(mc);
    result.class_names.push_back(mc.name);
    result.class_colours.push_back(mc.colour);
  }
  info.ignore_index = tm.ignore_index;
  info.crs_wkt = tm.crs_wkt;
  const auto gt = io::readSampleGeotransform(options.train_store, 0);
  info.pixel_size_x = std::abs(gt[1]);
  info.pixel_size_y = std::abs(gt[5]);
  info.best_metric = options.best_metric;
  return info;
}

}  // namespace geodl
