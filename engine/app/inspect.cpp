#include "app/inspect.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "base/file_kind.h"
#include "core/models.h"
#include "model/model_file.h"

namespace geodl {

namespace {

nlohmann::json parsed(const std::string& text) {
  const auto j = nlohmann::json::parse(text.empty() ? "{}" : text, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

RecordedMetrics metricsOf(const ModelInfo& info) {
  RecordedMetrics m;
  const auto j = parsed(info.metrics_json);
  if (!j.contains("mean_iou")) return m;
  m.present = true;
  m.mean_iou = j.value("mean_iou", 0.0);
  m.pixel_accuracy = j.value("pixel_accuracy", 0.0);
  if (j.contains("per_class"))
    for (const auto& c : j["per_class"]) m.class_iou.push_back(c.value("iou", 0.0));
  return m;
}

TrainingFacts trainingOf(const ModelInfo& info) {
  TrainingFacts t;
  const auto j = parsed(info.training_json);
  t.world_size = j.value("world_size", 1);
  t.batch_size = j.value("batch_size", 0);
  t.global_batch = j.value("global_batch", t.batch_size * t.world_size);
  t.pretrained_encoder = j.value("pretrained_encoder", std::string());
  t.pretrained_encoder_digest = j.value("pretrained_encoder_digest", std::string());
  return t;
}

}  // namespace

Inspection inspect(const std::string& path) {
  Inspection out;
  out.path = path;
  if (std::filesystem::is_directory(path))
    throw InputError("'" + path + "' is a folder; give a model file (model.pt, last_checkpoint.pt) or a sample "
                     "store (trn_samples.hdf5) in it");
  if (fileKind(path) == FileKind::Hdf5) {
    out.kind = Inspection::Kind::Store;
    out.store = io::readStoreMetadata(path);
    out.warnings = io::verifyStore(path);  // a damaged store throws, naming the dataset
    return out;
  }
  const LoadedModel loaded = loadModelFile(path);
  out.model = loaded.info;
  out.parameters = parameterCount(loaded.info.spec);
  out.weights_digest = weightsDigest(*loaded.model);
  out.warnings = loaded.warnings;
  out.metrics = metricsOf(loaded.info);
  out.training = trainingOf(loaded.info);
  return out;
}

}  // namespace geodl
