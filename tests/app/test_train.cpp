// The trainer on stores the tests generate: the loss falls, a stopped run resumes to the
// same weights, and bad input fails before any training.
#include <gtest/gtest.h>

#include "core/reference_missing.h"
#include <torch/torch.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <fstream>
#include <random>
#include <set>

#include "app/batch_loader.h"
#include "app/create_samples.h"
#include "app/train.h"
#include "core/losses.h"
#include "core/lr_schedule.h"
#include "core/batch_probe.h"
#include "core/device.h"
#include "base/errors.h"
#include "model/model_file.h"
#include "core/test_support.h"
#include "app/inspect.h"
#include "io/gis_fixtures.h"
#include "app/ml_fixtures.h"
#include "io/sample_store.h"

namespace geodl {
namespace {

namespace fs = std::filesystem;
using test::expectErrorContaining;
using test::TempDir;

using test::kSize;
using test::kBands;
using test::makeStore;

class CancelAt : public Progress {
 public:
  explicit CancelAt(int reports) : left_(reports) {}
  void report(double, const std::string&) override { --left_; }
  bool cancelled() const override { return left_ <= 0; }

 private:
  int left_;
};

class TrainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    trn_ = makeStore(dir_.path("trn_samples.hdf5"), 24, 1);
    val_ = makeStore(dir_.path("val_samples.hdf5"), 8, 2, 2, "val");
  }
  TrainOptions options(const std::string& output) const {
    TrainOptions o;
    o.train_store = trn_;
    o.val_store = val_;
    o.output_folder = dir_.path(output);
    o.epochs = 3;
    o.batch_size = 4;
    o.learning_rate = 1e-3;
    o.run.threads = 2;
    o.loader_threads = 2;
    o.seed = 7;
    o.deterministic = true;
    o.augmentation.hflip_prob = 0.5;
    o.augmentation.rotate_limit = 20;
    o.augmentation.rotate_prob = 0.5;
    return o;
  }
  static std::string digest(const std::string& path) {
    return weightsDigest(*loadModelFile(path).model);
  }
  TempDir dir_;
  std::string trn_, val_;
};

TEST_F(TrainTest, LossFallsAndEveryOutputIsWritten) {
  TrainOptions o = options("run");
  o.epochs = 5;
  NullProgress progress;
  const TrainResult r = train(o, progress);
  ASSERT_EQ(r.epochs.size(), 5u);
  EXPECT_LT(r.epochs.back().train_loss, 0.6 * r.epochs.front().train_loss);
  EXPECT_LT(r.epochs.back().val_loss, r.epochs.front().val_loss);
  EXPECT_GT(r.epochs.back().val.per_class[1].iou, 0.5);
  for (const auto& e : r.epochs) {
    EXPECT_GT(e.samples_per_second, 0);
    EXPECT_GE(e.data_wait, 0);
    EXPECT_GT(e.forward + e.backward, 0);
  }
  // StepLR: gamma every step_size epochs.
  EXPECT_DOUBLE_EQ(r.epochs[3].learning_rate, 1e-3);
  EXPECT_DOUBLE_EQ(r.epochs[4].learning_rate, 1e-3 * 0.9);

  for (const auto& p : {r.model_path, r.checkpoint_path, r.csv_path, r.report_path})
    EXPECT_TRUE(fs::exists(p)) << p;
  for (const auto& entry : fs::directory_iterator(dir_.path("run")))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();

  const ModelInfo info = readModelInfo(r.model_path);
  EXPECT_EQ(info.model_name, "unetsmall");
  EXPECT_EQ(info.spec.bands, kBands);
  EXPECT_EQ(info.spec.classes, 2);
  EXPECT_EQ(info.sample_size, kSize);
  EXPECT_EQ(info.classes[1].name, "building");
  EXPECT_EQ(info.classes[1].colour, "#e31a1c");
  EXPECT_EQ(info.band_mean, io::readStoreMetadata(trn_).metadata.band_mean);
  EXPECT_EQ(info.ignore_index, 255);
  EXPECT_DOUBLE_EQ(info.pixel_size_x, 0.5);
  EXPECT_EQ(info.crs_wkt, io::readStoreMetadata(trn_).metadata.crs_wkt);
  EXPECT_NE(info.crs_wkt.find("WGS 84 / UTM zone 18N"), std::string::npos);
  // The value range: the store's, or measured on its samples where it has none.
  ASSERT_EQ(info.band_min.size(), info.band_mean.size());
  ASSERT_EQ(info.band_max.size(), info.band_mean.size());
  for (size_t b = 0; b < info.band_min.size(); ++b) {
    EXPECT_LE(info.band_min[b], info.band_mean[b]);
    EXPECT_GE(info.band_max[b], info.band_mean[b]);
  }
  EXPECT_EQ(info.best_epoch, r.best_epoch);
  EXPECT_NE(info.metrics_json.find("mean_iou"), std::string::npos);
  EXPECT_NE(info.training_json.find("\"batch_size\":4"), std::string::npos);
  // The record is the option table's: every option that holds a value, typed as its option.
  const auto record = nlohmann::json::parse(info.training_json);
  for (const auto& opt : trainOptionTable())
    if (opt.show) EXPECT_TRUE(record.contains(opt.name)) << opt.name;
  EXPECT_EQ(record["epochs"], 5);
  EXPECT_EQ(record["model"], "unetsmall");
  EXPECT_EQ(record["class_weights"], "false");
  EXPECT_EQ(record["deterministic"], o.deterministic);
  EXPECT_DOUBLE_EQ(record["learning_rate"].get<double>(), 1e-3);

  // What `geodl info` prints, in typed fields (app/inspect.h).
  const Inspection found = inspect(r.model_path);
  EXPECT_EQ(found.kind, Inspection::Kind::Model);
  EXPECT_EQ(found.training.batch_size, 4);
  EXPECT_EQ(found.training.world_size, 1);
  EXPECT_EQ(found.training.global_batch, 4);
  ASSERT_TRUE(found.metrics.present);
  EXPECT_EQ(found.metrics.class_iou.size(), 2u);
  EXPECT_GT(found.parameters, 0);
  EXPECT_TRUE(found.warnings.empty());
  EXPECT_EQ(inspect(trn_).kind, Inspection::Kind::Store);
  EXPECT_EQ(inspect(trn_).store.metadata.sample_size, kSize);
  expectErrorContaining([&] { inspect(dir_.path("run")); }, "is a folder; give a model file");

  std::ifstream csv(r.csv_path);
  std::string header, line;
  std::getline(csv, header);
  EXPECT_NE(header.find("iou_building"), std::string::npos);
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  EXPECT_EQ(rows, 5);
  std::ifstream html(r.report_path);
  const std::string report((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(report.find("<svg"), std::string::npos);
  EXPECT_NE(report.find("<td>building</td>"), std::string::npos);
}

// precision bf16: autocast with float32 weights, checkpointed model included; it learns
// as fp32 does, and the model file keeps float32 weights.
TEST_F(TrainTest, Bf16TrainingLearnsAsFp32Does) {
  if (cpuBf16Instructions().empty())
    GTEST_SKIP() << "this CPU has neither AVX512_BF16 nor AMX-BF16 (or oneDNN is capped below them)";
  NullProgress progress;
  TrainOptions o = options("fp32");
  o.epochs = 4;
  o.checkpoint = "true";
  const TrainResult fp32 = train(o, progress);
  o = options("bf16");
  o.epochs = 4;
  o.checkpoint = "true";
  o.run.precision = "bf16";
  const TrainResult bf16 = train(o, progress);
  EXPECT_EQ(bf16.precision, "bf16");
  EXPECT_EQ(fp32.precision, "fp32");
  EXPECT_LT(bf16.epochs.back().train_loss, 0.6 * bf16.epochs.front().train_loss);
  EXPECT_NEAR(bf16.epochs.back().val_loss, fp32.epochs.back().val_loss, 0.05);
  EXPECT_GT(bf16.epochs.back().val.per_class[1].iou, 0.5);
  EXPECT_NE(bf16.epochs.back().train_loss, fp32.epochs.back().train_loss);  // bfloat16 it was
  auto model = loadModelFile(bf16.model_path).model;
  for (const auto& p : model->parameters()) EXPECT_EQ(p.scalar_type(), torch::kFloat);
}

// checkpoint auto (the default): off when the batch fits the memory budget without it, on
// when it would not (and the log says why); off with batch size auto; true and false force it.
TEST_F(TrainTest, CheckpointingSwitchesOnOnlyWhenTheBatchNeedsIt) {
  struct Log : Progress {
    void report(double, const std::string&) override {}
    bool cancelled() const override { return false; }
    void log(const std::string& m) override { lines += m + "\n"; }
    std::string lines;
  };
  TrainOptions o = options("roomy");
  o.epochs = 1;
  o.batch_size = 16;
  EXPECT_EQ(o.checkpoint, "auto");
  o.run.memory_budget_mib = 4096;
  Log roomy;
  EXPECT_FALSE(train(o, roomy).checkpointing);
  EXPECT_NE(roomy.lines.find("checkpointing off (automatic: a batch of 16 needs about"), std::string::npos)
      << roomy.lines;
  // unetsmall at 32 px: about 1.5 MiB per sample without checkpointing (the conv outputs
  // kept) and under 1 checkpointed, plus ~31 fixed: a batch of 24 needs it under 60 MiB.
  o = options("tight");
  o.epochs = 1;
  o.batch_size = 24;
  o.run.memory_budget_mib = 60;
  Log tight;
  const TrainResult on = train(o, tight);
  EXPECT_TRUE(on.checkpointing);
  EXPECT_NE(tight.lines.find("checkpointing on (automatic: a batch of 24 needs about"), std::string::npos)
      << tight.lines;
  EXPECT_NE(tight.lines.find(", checkpointing)"), std::string::npos) << tight.lines;  // the start line
  o.output_folder = dir_.path("forced_off");
  o.checkpoint = "false";
  EXPECT_FALSE(train(o, roomy).checkpointing);
  o.output_folder = dir_.path("forced_on");
  o.checkpoint = "true";
  o.run.memory_budget_mib = 4096;
  EXPECT_TRUE(train(o, roomy).checkpointing);
  o.output_folder = dir_.path("probed");
  o.checkpoint = "auto";
  o.batch_size = 0;
  Log probed;
  EXPECT_FALSE(train(o, probed).checkpointing);
  EXPECT_NE(probed.lines.find("checkpointing off (automatic: the batch size was chosen"), std::string::npos);
}

TEST_F(TrainTest, StoppedRunResumesToTheSameWeightsAsOneRun) {
  NullProgress quiet;
  const TrainResult whole = train(options("whole"), quiet);

  // Stopped in the middle of epoch 2 (24 samples / 4 = 6 batches + 2 validation per epoch).
  CancelAt stop(8 + 3);
  // The stop says how to continue, in the words the CLI and QGIS show (resumeAdvice).
  expectErrorContaining([&] { train(options("parts"), stop); },
                        "training stopped; the last complete epoch is in " +
                            fs::absolute(dir_.path("parts/last_checkpoint.pt")).string() +
                            ": continue with --resume (in QGIS: \"Resume from the checkpoint in the model's folder\")");
  EXPECT_THROW(train(options("parts"), stop), Cancelled);
  EXPECT_EQ(readModelInfo(dir_.path("parts/last_checkpoint.pt")).epochs_trained, 1);
  TrainOptions again = options("parts");
  again.resume = true;
  const TrainResult resumed = train(again, quiet);
  EXPECT_EQ(resumed.first_epoch, 2);
  ASSERT_EQ(resumed.epochs.size(), whole.epochs.size());
  for (size_t e = 0; e < whole.epochs.size(); ++e) {
    EXPECT_EQ(resumed.epochs[e].train_loss, whole.epochs[e].train_loss) << "epoch " << e + 1;
    EXPECT_EQ(resumed.epochs[e].val_loss, whole.epochs[e].val_loss) << "epoch " << e + 1;
  }
  EXPECT_EQ(digest(dir_.path("parts/last_checkpoint.pt")), digest(dir_.path("whole/last_checkpoint.pt")));
  EXPECT_EQ(digest(dir_.path("parts/model.pt")), digest(dir_.path("whole/model.pt")));

  // More epochs later: continues from the end.
  again.epochs = 4;
  const TrainResult longer = train(again, quiet);
  EXPECT_EQ(longer.first_epoch, 4);
  EXPECT_EQ(longer.epochs.size(), 4u);
}

// Each loss trains: its loss falls and the buildings are found.
TEST_F(TrainTest, EveryLossLearns) {
  NullProgress quiet;
  for (const auto& name : lossNames()) {
    if (name == "cross_entropy") continue;  // LossFallsAndEveryOutputIsWritten
    SCOPED_TRACE(name);
    TrainOptions o = options("loss_" + name);
    o.loss = name;
    o.epochs = 4;
    const TrainResult r = train(o, quiet);
    EXPECT_EQ(r.loss, name);
    EXPECT_LT(r.epochs.back().train_loss, 0.8 * r.epochs.front().train_loss);
    EXPECT_GT(r.best()->val.per_class[1].iou, 0.3);
    EXPECT_NE(readModelInfo(r.model_path).training_json.find("\"loss\":\"" + name + "\""), std::string::npos);
  }
}

// The optimizers learn, every step's rate follows the schedule (recorded at each epoch's
// first step), and a checkpoint resumes only with its own optimizer.
TEST_F(TrainTest, OptimizersAndSchedulesFollowTheirCurves) {
  NullProgress quiet;
  struct Case {
    std::string optimizer, scheduler;
    double learning_rate;
    int warmup;
    bool nesterov;
  };
  for (const Case& c : {Case{"sgd", "onecycle", 0.05, 0, true}, Case{"adamw", "cosine", 2e-3, 1, false},
                        Case{"adam", "plateau", 1e-3, 1, false}}) {
    SCOPED_TRACE(c.optimizer + " " + c.scheduler);
    TrainOptions o = options(c.optimizer);
    o.optimizer = c.optimizer;
    o.scheduler = c.scheduler;
    o.learning_rate = c.learning_rate;
    o.warmup_epochs = c.warmup;
    o.nesterov = c.nesterov;
    o.weight_decay = 1e-4;
    o.step_size = 1;
    o.epochs = 4;
    const TrainResult r = train(o, quiet);
    EXPECT_LT(r.epochs.back().train_loss, r.epochs.front().train_loss);
    Schedule s;
    s.kind = scheduleKind(c.scheduler);
    s.base = c.learning_rate;
    s.epochs = 4;
    s.steps_per_epoch = 6;  // 24 samples in batches of 4
    s.step_size = 1;
    s.gamma = o.gamma;
    s.warmup_epochs = c.warmup;
    std::vector<double> losses;
    for (const auto& e : r.epochs) {
      EXPECT_NEAR(e.learning_rate, learningRate(s, int64_t(e.epoch - 1) * 6, losses), 1e-15) << "epoch " << e.epoch;
      losses.push_back(e.val_loss);
    }
    EXPECT_NE(readModelInfo(r.model_path).training_json.find("\"optimizer\":\"" + c.optimizer + "\""),
              std::string::npos);
  }
  TrainOptions again = options("sgd");
  again.resume = true;
  again.epochs = 5;
  expectErrorContaining([&] { train(again, quiet); }, "the checkpoint was trained with optimizer sgd, not adam; "
                                                      "resume with --optimizer sgd");
  again.optimizer = "sgd";
  again.scheduler = "onecycle";
  again.nesterov = true;
  EXPECT_EQ(train(again, quiet).first_epoch, 5);
}

// A checkpoint saved after the rate has decayed resumes (LibTorch's load() keeps the rate
// the optimizer was built with; the checkpoint's digest covers the saved one).
TEST_F(TrainTest, ResumesAfterTheRateHasDecayed) {
  NullProgress quiet;
  TrainOptions o = options("decayed");
  o.step_size = 1;
  o.epochs = 2;
  train(o, quiet);
  o.resume = true;
  o.epochs = 3;
  const TrainResult r = train(o, quiet);
  EXPECT_EQ(r.first_epoch, 3);
  EXPECT_DOUBLE_EQ(r.epochs.back().learning_rate, 1e-3 * 0.9 * 0.9);
}

// A ResNet UNet from a pretrained encoder file: loaded (and said so), left as it is while
// frozen, its source and digest recorded in the model file; a model without such an
// encoder refuses one.
TEST_F(TrainTest, PretrainedEncoderLoadsFreezesAndIsRecorded) {
  const std::string file = dir_.path("resnet18.pt");
  if (!test::runPythonReference("write_torchvision_encoder.py", "resnet18 " + file))
    GEODL_REFERENCE_MISSING("python3-torch and python3-torchvision are not installed");
  struct Log : Progress {
    void report(double, const std::string&) override {}
    bool cancelled() const override { return false; }
    void log(const std::string& line) override { lines += line + "\n"; }
    std::string lines;
  } log;
  TrainOptions o = options("pretrained");
  o.model = "resnet18_unet";
  o.pretrained_encoder = file;
  o.encoder_freeze_epochs = 1;
  o.epochs = 1;
  const TrainResult r = train(o, log);
  EXPECT_NE(log.lines.find("pretrained encoder: 120 resnet18 encoder tensors loaded from " + file), std::string::npos)
      << log.lines;
  EXPECT_NE(log.lines.find("the encoder stays frozen for the first 1 epoch(s)"), std::string::npos);
  const auto state = test::loadPickledDict(file);
  const auto trained = loadModelFile(r.model_path);
  for (const auto& p : trained.model->named_parameters())
    if (p.key().rfind("encoder.", 0) == 0)
      EXPECT_TRUE(torch::equal(p.value(), state.at(p.key().substr(8)).toTensor())) << p.key() << " moved while frozen";
  const ModelInfo info = readModelInfo(r.model_path);
  EXPECT_NE(info.training_json.find("\"pretrained_encoder\":\"" + file + "\""), std::string::npos);
  EXPECT_NE(info.training_json.find("\"pretrained_encoder_digest\":\""), std::string::npos);
  EXPECT_EQ(info.training_json.find("\"pretrained_encoder_digest\":\"\""), std::string::npos);
  // Unfrozen with a factor: the encoder learns.
  o = options("unfrozen");
  o.model = "resnet18_unet";
  o.pretrained_encoder = file;
  o.encoder_lr_factor = 0.1;
  o.epochs = 1;
  const auto moved = loadModelFile(train(o, log).model_path);
  EXPECT_FALSE(torch::equal(moved.model->named_parameters()["encoder.conv1.weight"], state.at("conv1.weight").toTensor()));
  o = options("wrong_model");
  o.pretrained_encoder = file;
  expectErrorContaining([&] { train(o, log); }, "pretrained_encoder is for the models on a ResNet, Mix Transformer or DOFA encoder "
                                               "(resnet18_unet, resnet34_unet, resnet50_unet, resnet34_unetplusplus, "
                                               "deeplabv3_resnet50, deeplabv3plus_resnet50, segformer_b0, segformer_b1, "
                                               "segformer_b2, segformer_b3, segformer_b4, segformer_b5, dofa_base, "
                                               "dofa_large), not unetsmall");
}

TEST_F(TrainTest, AutomaticBatchSizeAndClassWeights) {
  TrainOptions o = options("auto");
  o.epochs = 1;
  o.batch_size = 0;
  o.run.memory_budget_mib = 512;
  o.class_weighting = ClassWeighting::Auto;
  o.model = "checkpointed_unet";
  NullProgress progress;
  const TrainResult r = train(o, progress);
  EXPECT_TRUE(r.batch_size_probed);
  EXPECT_GE(r.batch_size, 1);
  // The batch it chose fits the budget: a step at that batch peaks under 512 MiB.
  const auto store = io::readStoreMetadata(o.train_store).metadata;
  BatchProbeOptions probe;
  probe.model = o.model;
  probe.sample_size = store.sample_size;
  probe.bands = store.bands;
  probe.classes = store.num_classes;
  probe.device = "cpu";
  probe.threads = 2;
  const StepMeasurement step = measureTrainingStep(probe, r.batch_size, 1, progress);
  EXPECT_LE(step.peak_bytes, 512.0 * 1024 * 1024) << "batch " << r.batch_size;
  EXPECT_TRUE(readModelInfo(r.model_path).spec.checkpoint);

  const auto w = inverseFrequencyWeights({90, 10, 0});
  EXPECT_DOUBLE_EQ(w[0], 100.0 / (2 * 90));
  EXPECT_DOUBLE_EQ(w[1], 100.0 / (2 * 10));
  EXPECT_DOUBLE_EQ(w[2], 0.0);
}

TEST_F(TrainTest, EarlyStoppingAndMeanIouSelection) {
  TrainOptions o = options("early");
  o.epochs = 30;
  o.learning_rate = 1e-7;  // nothing improves much: the IoU stalls
  o.patience = 2;
  o.best_metric = "miou";
  NullProgress progress;
  const TrainResult r = train(o, progress);
  EXPECT_TRUE(r.stopped_early);
  EXPECT_LT(r.epochs.size(), 30u);
  EXPECT_EQ(int(r.epochs.size()) - r.best_epoch, 2);
  EXPECT_EQ(readModelInfo(r.model_path).best_metric, "miou");
}

TEST_F(TrainTest, BadInputFailsBeforeAnythingIsWritten) {
  NullProgress p;
  const auto fails = [&](TrainOptions o, const std::string& part) {
    expectErrorContaining([&] { train(o, p); }, part);
    EXPECT_FALSE(fs::exists(fs::path(o.output_folder) / "model.pt")) << part;
    EXPECT_FALSE(fs::exists(fs::path(o.output_folder) / "last_checkpoint.pt")) << part;
  };
  TrainOptions o = options("bad");
  o.train_store = dir_.path("missing.hdf5");
  fails(o, "does not exist; create it with `geodl samples`");
  {
    std::ofstream(dir_.path("text.hdf5")) << "not a store";
  }
  o = options("bad");
  o.val_store = dir_.path("text.hdf5");
  fails(o, "is a file of another kind, not a sample store (HDF5)");
  {
    std::ofstream(dir_.path("cut.hdf5")) << "\x89HDF\r\n\x1a\n and then nothing";
  }
  o = options("bad");
  o.val_store = dir_.path("cut.hdf5");
  fails(o, "starts like an HDF5 file but cannot be opened: it is damaged or truncated");
  o = options("bad");
  o.bands = 4;
  fails(o, "global.number_of_bands is 4 but the training store's samples have 3 bands");
  // 256 classes: the last one is the ignore index 255.
  o = options("bad");
  o.train_store = test::makeStore(dir_.path("classes256_trn.hdf5"), 24, 7, 256, "trn");
  o.val_store = test::makeStore(dir_.path("classes256_val.hdf5"), 8, 8, 256, "val");
  fails(o, "the training store has 256 classes (ids 0 to 255) but its ignore index is 255, one of them");
  {
    // 5000 bytes of a store's samples overwritten: refused, naming the store and the dataset.
    const std::string damaged = test::makeStore(dir_.path("damaged_trn.hdf5"), 24, 7, 2, "trn");
    std::fstream file(damaged, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(std::streamoff(fs::file_size(damaged) / 2));
    const std::string junk(5000, '\x5a');
    file.write(junk.data(), std::streamsize(junk.size()));
    file.close();
    o = options("bad");
    o.train_store = damaged;
    fails(o, "the training store: the sample store '" + damaged + "' is damaged: its dataset 'sat_img'");
  }
  o = options("bad");
  o.num_classes = 5;
  fails(o, "set num_classes to 2");
  o = options("bad");
  o.batch_size = 25;
  fails(o, "the training set has 24 samples, fewer than one batch of 25");
  o = options("bad");
  o.model = "resnet";
  fails(o, "the option model (global.model_name, --model, MODEL) has the value 'resnet', which is not one of unet, "
           "unetsmall, checkpointed_unet, ternausnet, resnet18_unet, resnet34_unet, resnet50_unet, "
           "resnet34_unetplusplus, deeplabv3_resnet50, deeplabv3plus_resnet50");
  o = options("bad");
  o.model = "deeplabv3plus_resnet50";
  o.batch_size = 1;
  fails(o, "deeplabv3plus_resnet50 trains on batches of at least 2 samples (the BatchNorm after its image pooling "
           "sees one value per channel and sample); set batch_size to 2 or more");
  o = options("bad");
  o.nesterov = true;
  fails(o, "nesterov needs optimizer sgd with a momentum above 0");
  o = options("bad");
  o.warmup_epochs = 4;
  fails(o, "warmup_epochs (4) must be at most num_epochs (3)");
  o = options("bad");
  o.encoder_freeze_epochs = 5;
  fails(o, "encoder_freeze_epochs (5) must be at most num_epochs (3)");
  // The ranges are the table's, for a struct filled by code too, in the words of a flag's.
  o = options("bad");
  o.epochs = 0;
  fails(o, "the option epochs (training.num_epochs, --epochs, EPOCHS) has the value '0', which is not a whole "
           "number from 1 to 100000; give such a value");
  o = options("bad");
  o.augmentation.hflip_prob = 1.5;
  fails(o, "the option hflip_prob (training.augmentation.hflip_prob, --hflip-prob, HFLIP_PROB) has the value "
           "'1.5', which is not a number from 0 to 1");
  o = options("bad");
  o.momentum = 1;
  fails(o, "the option momentum (training.momentum, --momentum, MOMENTUM) has the value '1', which is not a number "
           "from 0 to 0.999");
  o = options("bad");
  o.best_metric = "iou";
  fails(o, "has the value 'iou', which is not one of loss, miou");
  o = options("bad");
  o.class_weighting = ClassWeighting::Given;
  o.class_weights = {1.0};
  fails(o, "class_weights has 1 values for 2 classes");
  o = options("bad");
  o.resume = true;
  fails(o, "nothing to resume");
  {
    // A truncated checkpoint given to --resume: named as such, and left as it was.
    TrainOptions t = options("truncated");
    fs::create_directories(t.output_folder);
    const auto checkpoint = fs::path(t.output_folder) / "last_checkpoint.pt";
    const std::string cut = "PK\x03\x04 and the rest was lost";
    std::ofstream(checkpoint) << cut;
    t.resume = true;
    expectErrorContaining([&] { train(t, p); },
                          "cannot resume from the checkpoint: '" + checkpoint.string() +
                              "' is a LibTorch archive that is damaged or truncated");
    EXPECT_EQ(fs::file_size(checkpoint), cut.size());
    EXPECT_FALSE(fs::exists(fs::path(t.output_folder) / "model.pt"));
  }
  o = options("bad");
  o.run.precision = "bf16";
  o.run.device = "cpu";
  setenv("DNNL_MAX_CPU_ISA", "AVX2", 1);  // oneDNN capped below its bf16 kernels, on any CPU
  fails(o, "bf16 needs a CPU with AVX512_BF16 or AMX-BF16");
  o.run.precision = "fp32";
  o.bf16 = true;  // the older key says the same
  fails(o, "bf16 needs a CPU with AVX512_BF16 or AMX-BF16");
  unsetenv("DNNL_MAX_CPU_ISA");
  o = options("bad");
  o.augmentation.hflip_prob = 2;
  fails(o, "has the value '2', which is not a number from 0 to 1");
  {
    std::ofstream(dir_.path("a_file")) << "x";
  }
  o = options("bad");
  o.output_folder = dir_.path("a_file/out");
  expectErrorContaining([&] { train(o, p); }, "cannot create the output folder");

  // Pretrained weights of another class count.
  ModelSpec five = modelSpecFromName("unetsmall");
  five.classes = 5;
  ModelInfo info;
  info.model_name = "unetsmall";
  info.spec = five;
  info.band_mean = info.band_std = {0, 0, 0};
  for (int c = 0; c < 5; ++c) info.classes.push_back({c, "c" + std::to_string(c), "#000000"});
  saveModelFile(dir_.path("five.pt"), info, *makeModel(five));
  o = options("bad");
  o.pretrained = dir_.path("five.pt");
  fails(o, "gives 'final.weight' the shape [5, 32, 1, 1] but the model needs [2, 32, 1, 1]");
  o.pretrained = dir_.path("nope.pt");
  fails(o, "the pretrained weights");
}

TEST(TrainRealData, MassachusettsClipsLearnBuildings) {
  const std::string data = test::massachusettsFolder();
  if (data.empty()) GTEST_SKIP() << "../shared/data/massachusetts is absent: real-data test skipped";
  TempDir dir;
  SampleOptions s;
  s.sources = {{data + "/clipped/22978945_15_uint8_clipped.tif", data + "/clipped/22978945_15.gpkg", "",
                "class", "trn"},
               {data + "/clipped/23429155_15_uint8_clipped.tif", data + "/clipped/23429155_15.gpkg", "",
                "class", "val"}};
  s.output_folder = dir.path("samples");
  s.sample_size = 32;
  s.stride = 16;
  s.num_classes = 2;
  NullProgress progress;
  const SampleResult samples = createSamples(s, progress);
  ASSERT_EQ(samples.splits.size(), 2u);
  TrainOptions o;
  o.train_store = samples.splits[0].path;
  o.val_store = samples.splits[1].path;
  o.output_folder = dir.path("model");
  o.epochs = 4;
  o.batch_size = 8;
  o.learning_rate = 2e-3;
  o.run.threads = 2;
  o.seed = 3;
  o.augmentation.hflip_prob = 0.5;
  const TrainResult r = train(o, progress);
  EXPECT_LT(r.epochs.back().train_loss, 0.8 * r.epochs.front().train_loss);
  EXPECT_TRUE(r.epochs.back().val.per_class[1].present);
  const ModelInfo info = readModelInfo(r.model_path);
  EXPECT_NE(info.crs_wkt.find("Massachusetts"), std::string::npos) << info.crs_wkt;
  EXPECT_NEAR(info.pixel_size_x, 1.0, 0.05);
}

}  // namespace
}  // namespace geodl
