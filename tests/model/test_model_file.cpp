// Model files: round trips of weights and metadata, pretrained weights from geo-deep-learning.
#include <gtest/gtest.h>

#include "core/reference_missing.h"
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include "app/train.h"
#include "app/train_checkpoint.h"
#include "base/errors.h"
#include "core/torch_compat.h"
#include "core/torch_save_file.h"
#include "model/model_file.h"
#include "core/test_support.h"
#include "io/gis_fixtures.h"
#include "app/ml_fixtures.h"

namespace geodl {
namespace {

namespace fs = std::filesystem;
using namespace test;  // TempDir, makeStore, kSize, kBands, expectErrorContaining

TEST(ModelFile, RoundTripKeepsWeightsMetadataAndOutputs) {
  TempDir dir;
  ModelSpec spec = modelSpecFromName("unetsmall");
  spec.bands = 4;
  spec.classes = 3;
  spec.dropout = true;
  spec.dropout_probability = 0.2;
  torch::manual_seed(3);
  auto model = makeModel(spec);
  ModelInfo info;
  info.engine_version = "9.9";
  info.model_name = "unetsmall";
  info.spec = spec;
  info.sample_size = 64;
  info.data_type = "UInt16";
  info.band_mean = {1, 2, 3, 4};
  info.band_std = {5, 6, 7, 8};
  info.classes = {{0, "background", "#d9d9d9"}, {1, "building", "#e31a1c"}, {7, "water", "#1f78b4"}};
  info.crs_wkt = "LOCAL_CS[\"x\"]";
  info.pixel_size_x = 0.5;
  info.pixel_size_y = 0.25;
  info.epochs_trained = 12;
  info.best_epoch = 9;
  info.best_metric = "miou";
  info.metrics_json = R"({"mean_iou":0.5})";
  info.training_json = R"({"batch_size":8})";
  const std::string path = dir.path("m.pt");
  saveModelFile(path, info, *model);

  const LoadedModel loaded = loadModelFile(path);
  EXPECT_EQ(toJson(loaded.info), toJson(info));
  EXPECT_EQ(loaded.info.classes[2].id, 7);
  EXPECT_EQ(weightsDigest(*loaded.model), weightsDigest(*model));
  model->eval();
  const auto x = torch::randn({2, 4, 32, 32});
  EXPECT_TRUE(torch::equal(loaded.model->forward(x), model->forward(x)));
  EXPECT_EQ(toJson(readModelInfo(path)), toJson(info));

  // Pretrained weights from the same kind of model: identical.
  auto other = makeModel(spec);
  EXPECT_NE(weightsDigest(*other), weightsDigest(*model));
  loadPretrainedWeights(*other, path);
  EXPECT_EQ(weightsDigest(*other), weightsDigest(*model));

  // Damaged files: a clear error, not a crash.
  const auto size = fs::file_size(path);
  fs::copy_file(path, dir.path("cut.pt"));
  fs::resize_file(dir.path("cut.pt"), size / 2);
  expectErrorContaining([&] { loadModelFile(dir.path("cut.pt")); }, "is a LibTorch archive that is damaged or truncated");
  std::ofstream(dir.path("text.pt")) << "hello";
  expectErrorContaining([&] { readModelInfo(dir.path("text.pt")); }, "is a file of another kind, not a model file");
  expectErrorContaining([&] { loadModelFile(dir.path("none.pt")); }, "cannot read the model file");
  // What was given instead is named: a sample store, a folder, a raster.
  const std::string store = makeStore(dir.path("trn_samples.hdf5"), 2, 1);
  expectErrorContaining([&] { loadPredictor(store); }, "is a sample store (HDF5), not a model file");
  expectErrorContaining([&] { loadPredictor(dir.path("")); }, "is a folder, not a model file");
  std::ofstream(dir.path("empty.pt")).close();
  expectErrorContaining([&] { loadModelFile(dir.path("empty.pt")); }, "is an empty file, not a model file");
  expectErrorContaining([&] { modelInfoFromJson(R"({"format":"geodl-model","format_version":1})"); },
                        "has no 'model_name'");
}

// A small model (unetsmall, 3 bands, 2 classes) and its description.
ModelSpec smallSpec() {
  ModelSpec spec = modelSpecFromName("unetsmall");
  spec.bands = 3;
  spec.classes = 2;
  return spec;
}

ModelInfo smallInfo(const ModelSpec& spec) {
  ModelInfo info;
  info.engine_version = "9.9";
  info.model_name = "unetsmall";
  info.spec = spec;
  info.sample_size = 32;
  info.data_type = "Byte";
  info.band_mean.assign(size_t(spec.bands), 0.0);
  info.band_std.assign(size_t(spec.bands), 1.0);
  for (int c = 0; c < spec.classes; ++c) info.classes.push_back({c, "c" + std::to_string(c), "#000000"});
  return info;
}

// Flips one bit in the first copy of `t`'s bytes in the file, as a bad copy would.
void flipABitOf(const std::string& path, const torch::Tensor& t) {
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const torch::Tensor c = t.detach().contiguous();
  const std::string pattern(static_cast<const char*>(c.data_ptr()), 64);
  const size_t at = bytes.find(pattern);
  ASSERT_NE(at, std::string::npos) << "the tensor's bytes are not in " << path;
  bytes[at + 13] = char(bytes[at + 13] ^ 0x10);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// On a GPU the convolutions' weights are kept channels last (toChannelsLast): the same
// values, so the same digest, outputs within float rounding, and a model file that loads into
// the usual layout with every weight equal.
TEST(ModelFile, AChannelsLastModelKeepsItsValuesAndItsFileLoadsAsUsual) {
  TempDir dir;
  ModelSpec spec = modelSpecFromName("resnet18_unet");
  spec.bands = 3;
  spec.classes = 2;
  torch::manual_seed(4);
  auto model = makeModel(spec);
  model->eval();
  const auto x = torch::randn({2, 3, 64, 64});
  const auto before = model->forward(x);
  const std::string digest = weightsDigest(*model);
  toChannelsLast(*model);
  int converted = 0;
  for (const auto& p : model->parameters())
    if (p.dim() == 4) {
      EXPECT_TRUE(p.is_contiguous(at::MemoryFormat::ChannelsLast));
      ++converted;
    }
  EXPECT_GT(converted, 10);
  EXPECT_EQ(weightsDigest(*model), digest);
  EXPECT_LT(relativeError(model->forward(x), before), 1e-5);
  ModelInfo info;
  info.model_name = "resnet18_unet";
  info.spec = spec;
  info.band_mean = {0, 0, 0};
  info.band_std = {1, 1, 1};
  info.classes = {{0, "background", "#000000"}, {1, "building", "#ff0000"}};
  const std::string path = dir.path("channels_last.pt");
  saveModelFile(path, info, *model);
  const LoadedModel loaded = loadModelFile(path);
  EXPECT_EQ(weightsDigest(*loaded.model), digest);
  for (const auto& p : loaded.model->parameters()) EXPECT_TRUE(p.is_contiguous());
}

TEST(ModelFile, AFlippedWeightBitIsRefusedAsDamagedAndOldFilesLoadWithAWarning) {
  TempDir dir;
  const ModelSpec spec = smallSpec();
  torch::manual_seed(5);
  auto model = makeModel(spec);
  const ModelInfo info = smallInfo(spec);
  const std::string path = dir.path("m.pt"), damaged = dir.path("damaged.pt"), old = dir.path("old.pt");
  saveModelFile(path, info, *model);
  EXPECT_TRUE(loadModelFile(path).warnings.empty());
  fs::copy_file(path, damaged);
  flipABitOf(damaged, model->named_parameters().begin()->value());
  expectErrorContaining([&] { loadModelFile(damaged); }, "is damaged: its weights differ from the digest");
  expectErrorContaining([&] { loadPredictor(damaged); }, "copy it again from its source, or train again");
  auto other = makeModel(spec);
  expectErrorContaining([&] { loadPretrainedWeights(*other, damaged); }, "is damaged");

  // A file from before digests (the same archive without one) loads, with a warning.
  torch::serialize::OutputArchive archive, weights;
  model->save(weights);
  archive.write("model", weights);
  archive.write("geodl_metadata", c10::IValue(toJson(info)));
  archive.save_to(old);
  const LoadedModel loaded = loadModelFile(old);
  EXPECT_EQ(weightsDigest(*loaded.model), weightsDigest(*model));
  ASSERT_EQ(loaded.warnings.size(), 1u);
  EXPECT_NE(loaded.warnings[0].find("was written before model files carried a digest"), std::string::npos);
  EXPECT_EQ(loadPredictor(old).warnings, loaded.warnings);
}

TEST(ModelFile, ACheckpointWithDamagedOptimizerStateIsRefusedOnResume) {
  TempDir dir;
  const ModelSpec spec = smallSpec();
  torch::manual_seed(6);
  auto model = makeModel(spec);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  model->train();
  const auto x = torch::randn({2, 3, 32, 32});
  const auto y = torch::randint(0, 2, {2, 32, 32}, torch::kLong);
  torch::nn::functional::cross_entropy(model->forward(x), y).backward();
  adam.step();
  RunState state;
  state.seed = 6;
  state.batch_size = 2;
  const std::string path = dir.path("last_checkpoint.pt");
  saveCheckpoint(path, smallInfo(spec), *model, adam, state);

  auto restore = [&](const std::string& file) {
    Checkpoint c = loadCheckpoint(file);
    auto target = makeModel(spec);
    torch::optim::Adam optimizer(target->parameters(), torch::optim::AdamOptions(1e-3));
    restoreCheckpoint(c, *target, optimizer, torch::Device(torch::kCPU));
    return weightsDigest(*target);
  };
  EXPECT_EQ(restore(path), weightsDigest(*model));
  // Adam's first moment of the first parameter, one bit flipped.
  const torch::Tensor first = adam.param_groups().front().params().front();
  const auto& moments = static_cast<torch::optim::AdamParamState&>(
      *adam.state().at(compat::optimizerStateKey(first)));
  flipABitOf(path, moments.exp_avg());
  expectErrorContaining([&] { restore(path); }, "the checkpoint is damaged: its optimizer state differs");
}

TEST(ModelFile, GeoDeepLearningCheckpointLoadsAsPretrainedWeights) {
  if (!test::pythonTorchAvailable()) GEODL_REFERENCE_MISSING("Debian's python3-torch is not installed");
  const std::string path = test::tempPath("gdl_checkpoint.pth.tar");
  ASSERT_TRUE(test::runPythonReference("write_gdl_checkpoint.py", path));
  ModelSpec spec = modelSpecFromName("unetsmall");
  spec.bands = 3;
  spec.classes = 4;
  auto model = makeModel(spec);
  loadPretrainedWeights(*model, path);
  const auto dict = test::loadPickledDict(path).at("model").toGenericDict();
  for (const auto& p : model->named_parameters())
    EXPECT_TRUE(torch::equal(p.value(), dict.at(p.key()).toTensor())) << p.key();
  spec.classes = 5;
  auto wrong = makeModel(spec);
  expectErrorContaining([&] { loadPretrainedWeights(*wrong, path); }, "the shape [4, 32, 1, 1]");
  std::remove(path.c_str());
}

// torch.save(model.state_dict(), f) is an OrderedDict, which LibTorch 1.13's unpickler cannot
// build: GeoDL reads such files itself, with geo-deep-learning's checkpoints around them.
TEST(TorchSaveFile, OrderedDictsCheckpointsAndOptimizerStateRead) {
  if (!test::pythonTorchAvailable()) GEODL_REFERENCE_MISSING("Debian's python3-torch is not installed");
  const std::string folder = test::tempPath("state_dicts");
  std::filesystem::create_directories(folder);
  ASSERT_TRUE(test::runPythonReference("write_state_dicts.py", folder));
  const auto plain = test::loadPickledDict(folder + "/plain.pt");
  // The OrderedDict: the same tensors, in the same order.
  const auto ordered = readTorchSaveFile(folder + "/ordered.pt").toGenericDict();
  ASSERT_EQ(ordered.size(), plain.size());
  auto p = plain.begin();
  for (const auto& entry : ordered) {
    EXPECT_EQ(entry.key().toStringRef(), p->key().toStringRef());
    EXPECT_TRUE(torch::equal(entry.value().toTensor(), p->value().toTensor())) << p->key().toStringRef();
    ++p;
  }
  // The checkpoint: numbers, None, tuples, lists, the optimizer's state, dtypes, views.
  const auto c = readTorchSaveFile(folder + "/checkpoint.pth.tar").toGenericDict();
  EXPECT_EQ(c.at("epoch").toInt(), 3);
  EXPECT_EQ(c.at("arch").toStringRef(), "unetsmall");
  EXPECT_EQ(c.at("best_loss").toDouble(), 0.5);
  EXPECT_TRUE(c.at("params").isNone());
  EXPECT_EQ(c.at("big").toInt(), int64_t(1) << 40);
  EXPECT_EQ(c.at("negative").toInt(), -7);
  const auto flags = c.at("flags").toTupleRef().elements();
  ASSERT_EQ(flags.size(), 2u);
  EXPECT_TRUE(flags[0].toBool());
  EXPECT_FALSE(flags[1].toBool());
  const torch::Tensor half = c.at("half").toTensor();
  EXPECT_EQ(half.scalar_type(), torch::kFloat16);
  EXPECT_TRUE(torch::equal(half, torch::arange(4).to(torch::kFloat16)));
  EXPECT_TRUE(torch::equal(c.at("view").toTensor(), torch::tensor({3.0, 4.0}, torch::kFloat64)));
  const auto optimizer = c.at("optimizer").toGenericDict();
  const auto group = optimizer.at("param_groups").toList().get(0).toGenericDict();
  EXPECT_DOUBLE_EQ(group.at("lr").toDouble(), 1e-4);
  EXPECT_DOUBLE_EQ(group.at("betas").toTupleRef().elements()[1].toDouble(), 0.999);
  ModelSpec spec = modelSpecFromName("unetsmall");
  spec.bands = 3;
  spec.classes = 4;
  auto model = makeModel(spec);
  EXPECT_EQ(group.at("params").toList().size(), model->parameters().size());
  const auto first = optimizer.at("state").toGenericDict().at(int64_t(0)).toGenericDict();
  EXPECT_EQ(first.at("exp_avg").toTensor().sizes(), plain.begin()->value().toTensor().sizes());
  // And as pretrained weights: the OrderedDict under 'model', as geo-deep-learning saves it.
  loadPretrainedWeights(*model, folder + "/checkpoint.pth.tar");
  for (const auto& parameter : model->named_parameters())
    EXPECT_TRUE(torch::equal(parameter.value(), plain.at(parameter.key()).toTensor())) << parameter.key();
  // Lightning's checkpoint: under 'state_dict', every key under "model.": taken off, and said.
  auto again = makeModel(spec);
  const auto log = loadPretrainedWeights(*again, folder + "/prefixed.ckpt");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("are under the prefix 'model.': taken without it"), std::string::npos) << log[0];
  for (const auto& parameter : again->named_parameters())
    EXPECT_TRUE(torch::equal(parameter.value(), plain.at(parameter.key()).toTensor())) << parameter.key();
  // The format before PyTorch 1.6: the same tensors, shared storages shared; as pretrained
  // weights too.
  const auto legacy = readTorchSaveFile(folder + "/legacy.pt").toGenericDict();
  EXPECT_EQ(legacy.at("epoch").toInt(), 2);
  EXPECT_TRUE(torch::equal(legacy.at("half").toTensor(), torch::arange(4).to(torch::kFloat16)));
  EXPECT_TRUE(torch::equal(legacy.at("view").toTensor(), torch::tensor({3.0, 4.0}, torch::kFloat64)));
  EXPECT_EQ(legacy.at("view").toTensor().data_ptr<double>(), legacy.at("base").toTensor().data_ptr<double>() + 3);
  const auto legacy_model = legacy.at("model").toGenericDict();
  ASSERT_EQ(legacy_model.size(), plain.size());
  for (const auto& entry : legacy_model)
    EXPECT_TRUE(torch::equal(entry.value().toTensor(), plain.at(entry.key()).toTensor())) << entry.key().toStringRef();
  auto old = makeModel(spec);
  loadPretrainedWeights(*old, folder + "/legacy.pt");
  for (const auto& parameter : old->named_parameters())
    EXPECT_TRUE(torch::equal(parameter.value(), plain.at(parameter.key()).toTensor())) << parameter.key();
  // Cut short: named as damaged.
  {
    std::ifstream in(folder + "/legacy.pt", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(folder + "/short.pt", std::ios::binary) << bytes.substr(0, bytes.size() - 100);
  }
  expectErrorContaining([&] { readTorchSaveFile(folder + "/short.pt"); },
                        "is a torch.save file of the format before PyTorch 1.6 whose storage ");
  // A whole module (torch.save(model)) is not plain data: named, with the fix.
  expectErrorContaining([&] { readTorchSaveFile(folder + "/module.pt"); },
                        "'" + folder + "/module.pt' cannot be read as a file of torch.save: an object of the Python "
                        "class torch.nn.modules.linear.Linear is not plain data");
  expectErrorContaining([&] { readTorchSaveFile(folder + "/../nothing.pt"); }, "is not a file of torch.save");
  std::filesystem::remove_all(folder);
}

// Hugging Face's safetensors, read without Python: the same weights as torch.save's; a file
// with a wrong shape or a missing key refused with its message; a damaged header named.
TEST(TorchSaveFile, SafetensorsLoadAndBadOnesAreRefused) {
  if (!test::pythonTorchAvailable()) GEODL_REFERENCE_MISSING("Debian's python3-torch is not installed");
  const std::string folder = test::tempPath("safetensors");
  std::filesystem::create_directories(folder);
  if (!test::runPythonReference("write_safetensors.py", folder))
    GEODL_REFERENCE_MISSING("Python's safetensors is not installed (scripts/install-deps.sh installs it)");
  const auto plain = test::loadPickledDict(folder + "/plain.pt");
  EXPECT_TRUE(isSafetensorsFile(folder + "/model.safetensors"));
  EXPECT_FALSE(isSafetensorsFile(folder + "/plain.pt"));
  const auto read = readSafetensorsFile(folder + "/model.safetensors");
  ASSERT_EQ(read.size(), plain.size());
  for (const auto& entry : plain)
    EXPECT_TRUE(torch::equal(read.at(entry.key()).toTensor(), entry.value().toTensor())) << entry.key().toStringRef();
  ModelSpec spec = modelSpecFromName("unetsmall");
  spec.bands = 3;
  spec.classes = 4;
  auto model = makeModel(spec);
  loadPretrainedWeights(*model, folder + "/model.safetensors");
  for (const auto& parameter : model->named_parameters())
    EXPECT_TRUE(torch::equal(parameter.value(), plain.at(parameter.key()).toTensor())) << parameter.key();
  expectErrorContaining([&] { loadPretrainedWeights(*model, folder + "/wrong_shape.safetensors"); },
                        "gives 'conv1.EncodingBlock.1.weight' the shape [32, 3, 1, 1] but the model needs [32, 3, 3, 3]");
  expectErrorContaining([&] { loadPretrainedWeights(*model, folder + "/missing_key.safetensors"); },
                        "has no weights for 'final.bias'");
  // A header cut short, and data cut short.
  std::string bytes;
  {
    std::ifstream in(folder + "/model.safetensors", std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::ofstream(folder + "/cut.safetensors", std::ios::binary) << bytes.substr(0, bytes.size() - 100);
  expectErrorContaining([&] { readSafetensorsFile(folder + "/cut.safetensors"); }, "lie outside its data");
  std::string header = bytes;
  header[8 + 1] = '#';  // the JSON's first quote
  std::ofstream(folder + "/header.safetensors", std::ios::binary) << header;
  expectErrorContaining([&] { readSafetensorsFile(folder + "/header.safetensors"); },
                        "is not a valid safetensors file: its header is not JSON");
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace geodl
