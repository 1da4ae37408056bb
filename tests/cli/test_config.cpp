// geo-deep-learning's config.yaml and prep CSV.
#include <gtest/gtest.h>

#include <fstream>

#include "app/csv.h"
#include "cli/config.h"
#include "base/errors.h"
#include "io/gis_fixtures.h"

namespace geodl {
namespace {

const std::string kSeedConfig = std::string(GEODL_TEST_SOURCE_DIR) + "/app/data/gdl_seed_config.yaml";

std::string write(const test::TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir.path(name)) << text;
  return dir.path(name);
}

TEST(Config, TheSeedConfigParsesWithItsAnchorsAndMergeKeys) {
  const YAML::Node config = cli::loadConfig(kSeedConfig);
  EXPECT_EQ(config["global"]["samples_size"].as<int>(), 256);
  EXPECT_EQ(config["global"]["model_name"].as<std::string>(), "unetsmall");
  // unetsmall and checkpointed_unet take unet's settings through <<: *unet001.
  for (const char* model : {"unet", "unetsmall", "checkpointed_unet"}) {
    EXPECT_FALSE(config["models"][model]["dropout"].as<bool>()) << model;
    EXPECT_DOUBLE_EQ(config["models"][model]["probability"].as<double>(), 0.2) << model;
  }
  EXPECT_FALSE(config["models"]["unetsmall"]["<<"]);
  EXPECT_EQ(config["models"]["ternausnet"]["pretrained"].as<std::string>(), "./models/TernausNet.pt");
  EXPECT_TRUE(cli::unknownKeys(config).empty());
}

TEST(Config, UnknownKeysAreNamed) {
  test::TempDir dir;
  const auto path = write(dir, "c.yaml",
                          "global:\n  samples_size: 64\n  colour: red\nsample:\n  sampels_dist: 3\n"
                          "tarining:\n  batch_size: 3\n");
  EXPECT_EQ(cli::unknownKeys(cli::loadConfig(path)),
            (std::vector<std::string>{"global.colour", "sample.sampels_dist", "tarining"}));
}

TEST(Config, InvalidYamlNamesTheLine) {
  test::TempDir dir;
  const auto path = write(dir, "bad.yaml", "global:\n  samples_size: 64\n  data_path: [oops\n");
  try {
    cli::loadConfig(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("is not valid YAML: line"), std::string::npos) << e.what();
  }
}

TEST(Config, SampleOptionsComeFromTheKeysWithPathsFromTheConfigFolder) {
  test::TempDir dir;
  write(dir, "prep.csv", "a.tif,b.gpkg,class,trn\n\n/abs/c.tif, d.gpkg , kind ,val\n");
  const auto path = write(dir, "c.yaml",
                          "global:\n  samples_size: 128\n  num_classes: 3\n  number_of_bands: 4\n"
                          "  data_path: data\nsample:\n  prep_csv_file: prep.csv\n"
                          "  samples_dist: 64\n  remove_background: True\n"
                          "  min_annotated_percent: 5\n  mask_reference: true\n"
                          "  ignore_values: [255, 9]\n");
  const auto o = cli::sampleOptionsFromConfig(cli::loadConfig(path), path);
  EXPECT_EQ(o.sample_size, 128);
  EXPECT_EQ(o.stride, 64);
  EXPECT_EQ(o.num_classes, 3);
  EXPECT_EQ(o.bands, 4);
  EXPECT_TRUE(o.remove_background);
  EXPECT_TRUE(o.mask_reference);
  EXPECT_FALSE(o.mask_input_image);
  EXPECT_DOUBLE_EQ(o.min_annotated_percent, 5);
  EXPECT_EQ(o.ignored_values, (std::vector<std::string>{"255", "9"}));
  EXPECT_EQ(o.output_folder, dir.path("data/samples"));
  ASSERT_EQ(o.sources.size(), 2u);
  EXPECT_EQ(o.sources[0].raster, dir.path("a.tif"));
  EXPECT_EQ(o.sources[0].vector, dir.path("b.gpkg"));
  EXPECT_EQ(o.sources[1].raster, "/abs/c.tif");
  EXPECT_EQ(o.sources[1].field, "kind");
  EXPECT_EQ(o.sources[1].split, "val");
}

TEST(Config, MalformedCsvLinesAreNamed) {
  test::TempDir dir;
  const auto csv = write(dir, "prep.csv", "a.tif,b.gpkg,class,trn\na.tif,b.gpkg,trn\n");
  try {
    readPrepCsv(csv);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("line 2 of"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("has 3 columns"), std::string::npos) << e.what();
  }
  const auto split = write(dir, "split.csv", "a.tif,b.gpkg,class,train\n");
  EXPECT_THROW(readPrepCsv(split), InputError);
  const auto empty = write(dir, "empty.csv", "\n");
  EXPECT_THROW(readPrepCsv(empty), InputError);
}

TEST(Config, ABadValueNamesItsKey) {
  test::TempDir dir;
  write(dir, "prep.csv", "a.tif,b.gpkg,class,trn\n");
  const auto path = write(dir, "c.yaml",
                          "global:\n  samples_size: big\n  data_path: .\nsample:\n  prep_csv_file: prep.csv\n");
  try {
    cli::sampleOptionsFromConfig(cli::loadConfig(path), path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("global.samples_size"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace geodl

namespace geodl {
namespace {

TEST(TrainConfig, TheSeedConfigBecomesTrainingOptions) {
  const TrainOptions o = cli::trainOptionsFromConfig(cli::loadConfig(kSeedConfig), kSeedConfig);
  EXPECT_EQ(o.model, "unetsmall");
  EXPECT_EQ(o.num_classes, 5);
  EXPECT_EQ(o.bands, 3);
  EXPECT_EQ(o.sample_size, 256);
  EXPECT_EQ(o.train_store, "/my/data/path/samples/trn_samples.hdf5");
  EXPECT_EQ(o.val_store, "/my/data/path/samples/val_samples.hdf5");
  EXPECT_EQ(o.output_folder, "/my/output/path");
  EXPECT_EQ(o.num_trn_samples, 3356);
  EXPECT_EQ(o.num_val_samples, 1370);
  EXPECT_EQ(o.batch_size, 32);
  EXPECT_EQ(o.epochs, 100);
  EXPECT_DOUBLE_EQ(o.learning_rate, 0.0001);
  EXPECT_DOUBLE_EQ(o.weight_decay, 0);
  EXPECT_EQ(o.step_size, 4);
  EXPECT_DOUBLE_EQ(o.gamma, 0.9);
  EXPECT_EQ(o.class_weighting, ClassWeighting::None);
  EXPECT_FALSE(o.dropout);  // from unet's anchor, merged into unetsmall
  EXPECT_DOUBLE_EQ(o.dropout_probability, 0.2);
  EXPECT_TRUE(o.pretrained.empty());  // pretrained: False
  EXPECT_EQ(o.checkpoint, "auto");  // not in the seed config: the default
}

TEST(TrainConfig, GeoDLKeysAndTheirVariants) {
  test::TempDir dir;
  const auto path = write(dir, "c.yaml",
                          "global:\n  data_path: data\n  model_name: checkpointed_unet\n"
                          "training:\n  batch_size: auto\n  class_weights: [1, 2.5, 3]\n"
                          "  augmentation:\n    rotate_limit: 45\n    rotate_prob: 0.5\n"
                          "  hflip_prob: 0.25\n  patience: 3\n  best_metric: miou\n  seed: 5\n"
                          "  deterministic: true\n  threads: 2\n  memory_budget_mib: 900\n"
                          "models:\n  checkpointed_unet:\n    dropout: true\n    probability: 0.3\n"
                          "    pretrained: weights/start.pt\n");
  const TrainOptions o = cli::trainOptionsFromConfig(cli::loadConfig(path), path);
  EXPECT_EQ(o.model, "checkpointed_unet");
  EXPECT_EQ(o.batch_size, 0);
  EXPECT_EQ(o.class_weighting, ClassWeighting::Given);
  EXPECT_EQ(o.class_weights, (std::vector<double>{1, 2.5, 3}));
  EXPECT_DOUBLE_EQ(o.augmentation.rotate_limit, 45);
  EXPECT_DOUBLE_EQ(o.augmentation.rotate_prob, 0.5);
  EXPECT_DOUBLE_EQ(o.augmentation.hflip_prob, 0.25);  // directly under training works too
  EXPECT_DOUBLE_EQ(o.augmentation.vflip_prob, 0);
  EXPECT_EQ(o.patience, 3);
  EXPECT_EQ(o.best_metric, "miou");
  EXPECT_EQ(o.seed, 5);
  EXPECT_TRUE(o.deterministic);
  EXPECT_EQ(o.run.threads, 2);
  EXPECT_DOUBLE_EQ(o.run.memory_budget_mib, 900);
  EXPECT_TRUE(o.dropout);
  EXPECT_DOUBLE_EQ(o.dropout_probability, 0.3);
  EXPECT_EQ(o.pretrained, dir.path("weights/start.pt"));
  EXPECT_EQ(o.output_folder, dir.path("data/model"));  // no output_path: beside the samples
  EXPECT_TRUE(cli::unknownKeys(cli::loadConfig(path)).empty());

  const auto weights = write(dir, "w.yaml", "global:\n  data_path: .\ntraining:\n  class_weights: auto\n");
  EXPECT_EQ(cli::trainOptionsFromConfig(cli::loadConfig(weights), weights).class_weighting,
            ClassWeighting::Auto);
  const auto bad = write(dir, "b.yaml", "global:\n  data_path: .\ntraining:\n  class_weights: true\n");
  test::expectErrorContaining([&] { cli::trainOptionsFromConfig(cli::loadConfig(bad), bad); },
                              "training.class_weights has the value 'true', which is not one of false, auto, "
                              "or a list of numbers");
  // geo-deep-learning's loss_fn and optimizer keys, in its spellings or GeoDL's; GeoDL's
  // schedule keys.
  const auto losses = write(dir, "l.yaml",
                            "global:\n  data_path: .\ntraining:\n  loss_fn: OhemCrossEntropy\n  optimizer: sgd\n"
                            "  momentum: 0.8\n  nesterov: true\n  scheduler: onecycle\n  warmup_epochs: 2\n");
  const TrainOptions l = cli::trainOptionsFromConfig(cli::loadConfig(losses), losses);
  EXPECT_EQ(l.loss, "ohem_ce");
  EXPECT_EQ(l.optimizer, "sgd");
  EXPECT_DOUBLE_EQ(l.momentum, 0.8);
  EXPECT_TRUE(l.nesterov);
  EXPECT_EQ(l.scheduler, "onecycle");
  EXPECT_EQ(l.warmup_epochs, 2);
  EXPECT_TRUE(cli::unknownKeys(cli::loadConfig(losses)).empty());
  for (const auto& [spelling, name] : std::vector<std::pair<std::string, std::string>>{
           {"CrossEntropy", "cross_entropy"}, {"Lovasz", "lovasz"}, {"Focal", "focal"}, {"ce_dice", "ce_dice"}}) {
    const auto one = write(dir, "one.yaml", "global:\n  data_path: .\ntraining:\n  loss_fn: " + spelling + "\n");
    EXPECT_EQ(cli::trainOptionsFromConfig(cli::loadConfig(one), one).loss, name) << spelling;
  }
  const auto adabound = write(dir, "a.yaml", "global:\n  data_path: .\ntraining:\n  optimizer: adabound\n");
  test::expectErrorContaining([&] { cli::trainOptionsFromConfig(cli::loadConfig(adabound), adabound); },
                              "training.optimizer has the value 'adabound', which is not one of adam, adamw, sgd");
  const auto text = write(dir, "t.yaml", "global:\n  data_path: .\ntraining:\n  num_epochs: many\n");
  test::expectErrorContaining([&] { cli::trainOptionsFromConfig(cli::loadConfig(text), text); },
                              "training.num_epochs has the value 'many', which is not a whole number from 1 "
                              "to 100000");
}

}  // namespace
}  // namespace geodl
