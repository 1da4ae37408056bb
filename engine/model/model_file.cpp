#include "model/model_file.h"

#include <torch/script.h>
#include <torch/serialize.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <optional>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/file_kind.h"

namespace geodl {

namespace {

constexpr const char* kMetadataKey = "geodl_metadata";
constexpr const char* kModelKey = "model";
// The weights digest written at save time (files from before it have none).
constexpr const char* kDigestKey = "geodl_weights_digest";

using TensorMap = std::map<std::string, torch::Tensor>;

TensorMap namedState(torch::nn::Module& module) {
  TensorMap state;
  for (const auto& p : module.named_parameters()) state[p.key()] = p.value();
  for (const auto& b : module.named_buffers()) state[b.key()] = b.value();
  return state;
}

std::string shapeText(const torch::Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

// Refuses what cannot be a model file, naming what it is instead.
void checkLooksLikeModel(const std::string& path) {
  const FileKind kind = fileKind(path);
  switch (kind) {
    case FileKind::ZipArchive: return;
    case FileKind::Missing: throw InputError("cannot read the model file '" + path + "': check the path");
    case FileKind::Hdf5:
      throw InputError("'" + path + "' is a sample store (HDF5), not a model file; train on it with `geodl train` "
                       "and give the model.pt it writes");
    default:
      throw InputError("'" + path + "' is " + describeFileKind(kind) + ", not a model file; give the model.pt that "
                       "`geodl train` wrote (in training.output_path)");
  }
}

torch::serialize::InputArchive openArchive(const std::string& path) {
  checkLooksLikeModel(path);
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path, torch::Device(torch::kCPU));
  } catch (const c10::Error&) {
    throw InputError("'" + path + "' is a LibTorch archive that is damaged or truncated (" +
                     std::to_string(fileSize(path)) + " bytes); copy it again, or train again");
  }
  return archive;
}

ModelInfo readInfo(torch::serialize::InputArchive& archive, const std::string& path) {
  c10::IValue value;
  if (!archive.try_read(kMetadataKey, value) || !value.isString())
    throw InputError("'" + path + "' is a LibTorch archive without GeoDL metadata; give a model "
                     "file written by `geodl train`");
  try {
    return modelInfoFromJson(value.toStringRef());
  } catch (const InputError& e) {
    throw InputError("'" + path + "': " + e.what());
  }
}

// Copies `source` into the model's parameters and buffers, checking names and shapes.
void assignState(torch::nn::Module& model, const TensorMap& source, const std::string& path,
                 bool buffers_required) {
  torch::NoGradGuard no_grad;
  std::vector<std::pair<std::string, torch::Tensor>> targets;  // in the model's order
  for (const auto& p : model.named_parameters()) targets.emplace_back(p.key(), p.value());
  const size_t parameters = targets.size();
  for (const auto& b : model.named_buffers()) targets.emplace_back(b.key(), b.value());
  for (size_t i = 0; i < targets.size(); ++i) {
    const std::string& name = targets[i].first;
    torch::Tensor& target = targets[i].second;
    auto it = source.find(name);
    const bool is_parameter = i < parameters;
    if (it == source.end()) {
      if (!is_parameter && !buffers_required) continue;
      throw InputError("'" + path + "' has no weights for '" + name +
                       "': it was made for another architecture; train from scratch or give "
                       "weights of the same model");
    }
    if (it->second.sizes() != target.sizes())
      throw InputError("'" + path + "' gives '" + name + "' the shape " + shapeText(it->second) +
                       " but the model needs " + shapeText(target) +
                       ": the band count, class count or architecture differ from the ones the "
                       "weights were trained with");
    target.copy_(it->second.to(target.dtype()));
  }
}

}  // namespace

void saveModelFile(const std::string& path, const ModelInfo& info, SegmentationModelImpl& model,
                   const std::function<void(torch::serialize::OutputArchive&)>& extra, const std::string& kind) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive weights;
  model.save(weights);  // loadModelFile maps the tensors to the CPU, whatever they were on
  archive.write(kModelKey, weights);
  archive.write(kMetadataKey, c10::IValue(toJson(info)));
  archive.write(kDigestKey, c10::IValue(weightsDigest(model)));
  if (extra) extra(archive);
  const std::string what = kind + " '" + std::filesystem::absolute(path).string() + "'";
  writeFileAtomically(path, [&](const std::string& temp) {
    // Through a sink that never fails mid-write: LibTorch's writer aborts the process when
    // a write throws or comes up short (a full disk), its destructor throwing again.
    FileSink sink(temp, what);
    try {
      archive.save_to([&](const void* data, size_t n) { return sink.write(data, n); });
    } catch (const c10::Error& e) {
      throw IoError("cannot write " + what + ": " + e.what_without_backtrace());
    }
    sink.close();
  });
}

namespace {

// The archive when `path` is a LibTorch archive holding GeoDL metadata, else nothing: the
// one read of a file that may be a GeoDL model (then loaded from the same archive).
std::optional<torch::serialize::InputArchive> openModelArchive(const std::string& path) {
  if (!std::ifstream(path, std::ios::binary)) return std::nullopt;
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path, torch::Device(torch::kCPU));
  } catch (const c10::Error&) {
    return std::nullopt;
  }
  c10::IValue value;
  if (!archive.try_read(kMetadataKey, value) || !value.isString()) return std::nullopt;
  return archive;
}

LoadedModel loadFromArchive(torch::serialize::InputArchive& archive, const std::string& path,
                            const std::function<void(torch::serialize::InputArchive&)>& extra) {
  LoadedModel loaded;
  loaded.info = readInfo(archive, path);
  ModelSpec spec = loaded.info.spec;
  spec.pretrained.clear();  // the weights come from this file
  loaded.model = makeModel(spec);
  // Read into a twin first: LibTorch's archive reader would silently take other shapes.
  torch::serialize::InputArchive weights;
  if (!archive.try_read(kModelKey, weights))
    throw InputError("'" + path + "' has GeoDL metadata but no weights: the file is damaged");
  auto twin = makeModel(spec);
  try {
    twin->load(weights);
  } catch (const c10::Error& e) {
    throw InputError("'" + path + "' has weights that do not fit its own description (" +
                     e.what_without_backtrace() + "): the file is damaged");
  }
  c10::IValue digest;
  if (!archive.try_read(kDigestKey, digest) || !digest.isString())
    loaded.warnings.push_back("'" + path + "' was written before model files carried a digest of their "
                              "weights: damage to it cannot be detected; train again or save it again "
                              "with this version to add one");
  else if (digest.toStringRef() != weightsDigest(*twin))
    throw InputError("'" + path + "' is damaged: its weights differ from the digest written when it was "
                     "saved (a bad copy or a failing disk); copy it again from its source, or train again");
  assignState(*loaded.model, namedState(*twin), path, true);
  loaded.model->eval();
  if (extra) extra(archive);
  return loaded;
}

}  // namespace

LoadedModel loadModelFile(const std::string& path,
                          const std::function<void(torch::serialize::InputArchive&)>& extra) {
  auto archive = openArchive(path);
  return loadFromArchive(archive, path, extra);
}

ModelInfo readModelInfo(const std::string& path) {
  auto archive = openArchive(path);
  return readInfo(archive, path);
}

std::optional<ModelInfo> tryReadModelInfo(const std::string& path) {
  auto archive = openModelArchive(path);
  if (!archive) return std::nullopt;
  return readInfo(*archive, path);
}

bool isModelFile(const std::string& path) { return openModelArchive(path).has_value(); }

void addToDigest(uint64_t& hash, const torch::Tensor& tensor) {
  if (!tensor.defined()) return;
  const torch::Tensor t = tensor.detach().to(torch::kCPU).contiguous();
  addToDigest(hash, t.data_ptr(), size_t(t.numel()) * t.element_size());
}

std::string weightsDigest(SegmentationModelImpl& model) {
  uint64_t hash = kDigestStart;
  for (const auto& [name, tensor] : namedState(model)) {
    addToDigest(hash, name.data(), name.size());
    addToDigest(hash, tensor);
  }
  return digestText(hash);
}

std::vector<std::string> loadPretrainedWeights(SegmentationModelImpl& model, const std::string& path) {
  checkReadableFile(path, "the pretrained weights");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError("cannot read the pretrained weights '" + path + "': check the path");
  if (auto archive = openModelArchive(path)) {  // to fine-tune a GeoDL model
    const LoadedModel source = loadFromArchive(*archive, path, {});
    assignState(model, namedState(*source.model), path, false);
    return source.warnings;
  }
  // A torch.save'd dict (an OrderedDict too): a state dict, or a checkpoint holding one under
  // 'model' or 'state_dict'.
  c10::IValue value = readTorchSavedDict(path, "pretrained weights", "",
                                         "give a state dict (torch.save(model.state_dict(), f)) or a GeoDL model file");
  for (const char* key : {"model", "state_dict"}) {
    if (value.isGenericDict() && value.toGenericDict().contains(key) &&
        value.toGenericDict().at(key).isGenericDict()) {
      value = value.toGenericDict().at(key);
      break;
    }
  }
  if (!value.isGenericDict())
    throw InputError("'" + path + "' holds no state dict (a dictionary of tensors)");
  TensorMap state;
  for (const auto& item : value.toGenericDict()) {
    if (!item.key().isString() || !item.value().isTensor()) continue;
    std::string name = item.key().toStringRef();
    if (name.rfind("module.", 0) == 0) name = name.substr(7);  // saved from DataParallel
    state[name] = item.value().toTensor();
  }
  // Weights saved from a wrapper (Lightning's "model.", "net.", "encoder."...): the prefix
  // that, taken off, gives the model's first parameter its name is taken off every key.
  std::vector<std::string> log;
  const auto parameters = model.named_parameters();
  const std::string first = parameters.is_empty() ? "" : parameters.begin()->key();
  if (!first.empty() && !state.count(first)) {
    std::string prefix;
    for (const auto& entry : state) {
      const std::string& key = entry.first;
      if (key.size() > first.size() + 1 && key.compare(key.size() - first.size(), first.size(), first) == 0 &&
          key[key.size() - first.size() - 1] == '.') {
        prefix = key.substr(0, key.size() - first.size());
        break;
      }
    }
    if (!prefix.empty()) {
      TensorMap stripped;
      for (const auto& [key, tensor] : state)
        if (key.rfind(prefix, 0) == 0) stripped[key.substr(prefix.size())] = tensor;
      state = std::move(stripped);
      log.push_back("the weights of '" + path + "' are under the prefix '" + prefix + "': taken without it");
    }
  }
  assignState(model, state, path, false);
  return log;
}

namespace {

ModelInfo readSidecar(const std::string& path, const std::string& model) {
  YAML::Node node;
  try {
    node = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw InputError("cannot read the sidecar '" + path + "' of the TorchScript model '" + model +
                     "': " + e.what());
  }
  const auto need = [&](const char* key) {
    if (!node[key])
      throw InputError("the sidecar '" + path + "' has no '" + key + "'; it needs bands, band_mean, "
                       "band_std and classes");
    return node[key];
  };
  ModelInfo info;
  try {
    info.model_name = "torchscript";
    info.spec.bands = need("bands").as<int>();
    info.band_mean = need("band_mean").as<std::vector<double>>();
    info.band_std = need("band_std").as<std::vector<double>>();
    int index = 0;
    for (const auto& c : need("classes")) {
      ModelClass mc;
      if (c.IsMap()) {
        mc.id = c["id"] ? c["id"].as<int>() : index;
        mc.name = c["name"] ? c["name"].as<std::string>() : std::to_string(mc.id);
        mc.colour = c["colour"] ? c["colour"].as<std::string>()
                                : c["color"] ? c["color"].as<std::string>() : "";
      } else {
        mc.id = index;
        mc.name = c.as<std::string>();
      }
      if (mc.colour.empty()) mc.colour = defaultClassColour(mc.name, index);
      info.classes.push_back(mc);
      ++index;
    }
    info.spec.classes = int(info.classes.size());
    info.sample_size = node["sample_size"] ? node["sample_size"].as<int>() : 256;
    info.data_type = node["data_type"] ? node["data_type"].as<std::string>() : "";
    info.ignore_index = node["ignore_index"] ? node["ignore_index"].as<int>() : 255;
    if (node["pixel_size"]) info.pixel_size_x = info.pixel_size_y = node["pixel_size"].as<double>();
  } catch (const YAML::Exception& e) {
    throw InputError("the sidecar '" + path + "' has a malformed value: " + e.what());
  }
  if (int(info.band_mean.size()) != info.spec.bands || int(info.band_std.size()) != info.spec.bands)
    throw InputError("the sidecar '" + path + "' gives " + std::to_string(info.band_mean.size()) +
                     " means and " + std::to_string(info.band_std.size()) + " deviations for " +
                     std::to_string(info.spec.bands) + " bands");
  if (info.classes.empty()) throw InputError("the sidecar '" + path + "' lists no class");
  return info;
}

}  // namespace

Predictor loadPredictor(const std::string& path, const std::string& sidecar) {
  checkLooksLikeModel(path);
  Predictor p;
  auto archive = sidecar.empty() ? openModelArchive(path) : std::nullopt;
  // A zip LibTorch cannot read at all is damaged or truncated, whatever it was: said so,
  // rather than asked for a TorchScript sidecar.
  if (!archive) (void)openArchive(path);
  if (archive) {
    auto loaded = std::make_shared<LoadedModel>(loadFromArchive(*archive, path, {}));
    p.info = loaded->info;
    p.warnings = loaded->warnings;
    p.forward = [loaded](const torch::Tensor& x) { return loaded->model->forward(x); };
    p.to = [loaded](const torch::Device& d) {
      loaded->model->to(d);
      if (d.is_cuda()) toChannelsLast(*loaded->model);
    };
    p.cast = [loaded](torch::ScalarType type) { loaded->model->to(type); };
    return p;
  }
  namespace fs = std::filesystem;
  std::string meta = sidecar;
  if (meta.empty())
    for (const char* ext : {".json", ".yaml", ".yml"}) {
      const auto candidate = fs::path(path).replace_extension(ext);
      if (fs::exists(candidate)) {
        meta = candidate.string();
        break;
      }
    }
  if (meta.empty())
    throw InputError("'" + path + "' is not a GeoDL model file, and no sidecar (" +
                     fs::path(path).replace_extension(".json").string() + " or .yaml) describes it "
                     "as a TorchScript model; train with `geodl train`, or add the sidecar");
  auto module = std::make_shared<torch::jit::Module>();
  try {
    *module = torch::jit::load(path, torch::Device(torch::kCPU));
  } catch (const c10::Error& e) {
    throw InputError("'" + path + "' is not a TorchScript module (torch.jit.save): " +
                     e.what_without_backtrace());
  }
  module->eval();
  p.info = readSidecar(meta, path);
  p.torchscript = true;
  p.forward = [module](const torch::Tensor& x) {
    auto out = module->forward({x});
    // Modules returning a tuple or a dict (e.g. torchvision's {'out': ...}) give the first.
    if (out.isTuple()) return out.toTuple()->elements()[0].toTensor();
    if (out.isGenericDict()) return out.toGenericDict().begin()->value().toTensor();
    return out.toTensor();
  };
  p.to = [module](const torch::Device& d) { module->to(d); };
  p.cast = [module](torch::ScalarType type) { module->to(type); };
  return p;
}

}  // namespace geodl
