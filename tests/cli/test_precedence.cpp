// Defaults < config file < command line, for every job, through the option tables: config
// paths are relative to the config's folder, command-line paths to the current folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "app/batch_probe_options.h"
#include "cli/config.h"
#include "cli/option_flags.h"
#include "base/errors.h"
#include "io/gis_fixtures.h"

namespace geodl {
namespace {

namespace fs = std::filesystem;

std::string write(const test::TempDir& dir, const std::string& name, const std::string& text) {
  fs::create_directories(fs::path(dir.path(name)).parent_path());
  std::ofstream(dir.path(name)) << text;
  return dir.path(name);
}

// A job's options as `geodl <job> [config] args...` builds them, from another current folder.
template <class Options>
Options fromCommandLine(const OptionTable<Options>& table, const std::string& config_path,
                        std::vector<std::string> args) {
  CLI::App app;
  cli::OptionFlags flags;
  flags.add(&app, table);
  args.insert(args.begin(), "geodl");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  app.parse(int(argv.size()), argv.data());
  return cli::layeredOptions(table, config_path, flags);
}

// Runs `f` with the current folder set to `folder`.
template <class F>
auto inFolder(const std::string& folder, F f) {
  const fs::path before = fs::current_path();
  fs::create_directories(folder);
  fs::current_path(folder);
  struct Back {
    fs::path p;
    ~Back() { fs::current_path(p); }
  } back{before};
  return f();
}

TEST(Precedence, SamplesDefaultsThenConfigThenCommandLine) {
  test::TempDir dir;
  write(dir, "cfg/prep.csv", "a.tif,b.gpkg,class,trn\n");
  write(dir, "cfg/other.csv", "c.tif,d.gpkg,class,val\n");
  const auto config = write(dir, "cfg/c.yaml",
                            "global:\n  samples_size: 128\n  data_path: data\nsample:\n  prep_csv_file: prep.csv\n"
                            "  samples_dist: 64\n  val_percent: 10\n");
  const auto o = inFolder(dir.path("run"), [&] {
    return fromCommandLine(sampleOptionTable(), config,
                           {"--samples-dist", "32", "--data-path", "out", "--footprint", "fp.gpkg"});
  });
  EXPECT_EQ(o.sample_size, 128);                             // config
  EXPECT_EQ(o.stride, 32);                                   // command line over config
  EXPECT_DOUBLE_EQ(o.min_annotated_percent, SampleOptions{}.min_annotated_percent);  // default
  EXPECT_EQ(o.output_folder, dir.path("run/out/samples"));   // a flag's path: from the current folder
  EXPECT_EQ(o.footprint_path, dir.path("run/fp.gpkg"));
  ASSERT_EQ(o.sources.size(), 1u);
  EXPECT_EQ(o.sources[0].raster, dir.path("cfg/a.tif"));     // the config's: from its folder
  EXPECT_EQ(o.split_mode, SplitMode::ValidationPercent);     // sample.val_percent works
  EXPECT_DOUBLE_EQ(o.validation_percent, 10);

  // The command line's CSV replaces the config's (which is then never read).
  const auto csv = inFolder(dir.path("cfg"), [&] {
    return fromCommandLine(sampleOptionTable(), config, {"--prep-csv-file", "other.csv", "--split", "dataset"});
  });
  ASSERT_EQ(csv.sources.size(), 1u);
  EXPECT_EQ(csv.sources[0].split, "val");
  EXPECT_EQ(csv.split_mode, SplitMode::FromSources);  // --split over what val_percent implied
}

TEST(Precedence, TheCommandLineAsksForEverySplit) {
  const auto percent = fromCommandLine(sampleOptionTable(), "", {"--val-percent", "15"});
  EXPECT_EQ(percent.split_mode, SplitMode::ValidationPercent);
  EXPECT_DOUBLE_EQ(percent.validation_percent, 15);
  const auto polygons = fromCommandLine(sampleOptionTable(), "", {"--validation-vector", "/v.gpkg", "--validation-layer", "zones"});
  EXPECT_EQ(polygons.split_mode, SplitMode::ValidationPolygons);
  EXPECT_EQ(polygons.validation_vector, "/v.gpkg");
  EXPECT_EQ(polygons.validation_layer, "zones");
  const auto plain = fromCommandLine(sampleOptionTable(), "", {"--split", "percent"});
  EXPECT_EQ(plain.split_mode, SplitMode::ValidationPercent);
  EXPECT_DOUBLE_EQ(plain.validation_percent, 20);  // the one default
}

TEST(Precedence, TrainDefaultsThenConfigThenCommandLine) {
  test::TempDir dir;
  const auto config = write(dir, "cfg/c.yaml",
                            "global:\n  data_path: data\n  model_name: unetsmall\ntraining:\n  batch_size: 8\n"
                            "  num_epochs: 5\n  learning_rate: 0.01\nmodels:\n  unetsmall:\n    probability: 0.3\n"
                            "  checkpointed_unet:\n    dropout: true\n    pretrained: w/start.pt\n");
  const auto o = inFolder(dir.path("run"), [&] {
    return fromCommandLine(trainOptionTable(), config, {"--epochs", "2", "--output-path", "out"});
  });
  EXPECT_EQ(o.batch_size, 8);
  EXPECT_EQ(o.epochs, 2);
  EXPECT_DOUBLE_EQ(o.learning_rate, 0.01);
  EXPECT_DOUBLE_EQ(o.gamma, TrainOptions{}.gamma);
  EXPECT_DOUBLE_EQ(o.dropout_probability, 0.3);
  EXPECT_FALSE(o.dropout);
  EXPECT_EQ(o.train_store, dir.path("cfg/data/samples/trn_samples.hdf5"));
  EXPECT_EQ(o.output_folder, dir.path("run/out"));
  // --model chooses the models.<name> section too.
  const auto other = fromCommandLine(trainOptionTable(), config, {"--model", "checkpointed_unet", "--batch-size", "auto"});
  EXPECT_EQ(other.model, "checkpointed_unet");
  EXPECT_TRUE(other.dropout);
  EXPECT_DOUBLE_EQ(other.dropout_probability, TrainOptions{}.dropout_probability);
  EXPECT_EQ(other.pretrained, dir.path("cfg/w/start.pt"));
  EXPECT_EQ(other.batch_size, 0);
  EXPECT_EQ(other.output_folder, dir.path("cfg/data/model"));  // no output_path: beside the samples
  // checkpoint: auto by default; --checkpoint alone is true, as when it was a plain flag;
  // any YAML boolean spelling is accepted.
  EXPECT_EQ(other.checkpoint, "auto");
  EXPECT_EQ(fromCommandLine(trainOptionTable(), config, {"--checkpoint"}).checkpoint, "true");
  EXPECT_EQ(fromCommandLine(trainOptionTable(), config, {"--checkpoint", "--epochs", "3"}).checkpoint, "true");
  EXPECT_EQ(fromCommandLine(trainOptionTable(), config, {"--checkpoint", "false"}).checkpoint, "false");
  const auto yes = write(dir, "cfg/yes.yaml", "training:\n  checkpoint: True\n");
  EXPECT_EQ(fromCommandLine(trainOptionTable(), yes, {}).checkpoint, "true");
  const auto off = write(dir, "cfg/off.yaml", "models:\n  unetsmall:\n    checkpoint: no\n");
  EXPECT_EQ(fromCommandLine(trainOptionTable(), off, {}).checkpoint, "false");
}

TEST(Precedence, ClassifyDefaultsThenConfigThenCommandLine) {
  test::TempDir dir;
  const auto config = write(dir, "cfg/c.yaml",
                            "inference:\n  state_dict_path: m/model.pt\n  chunk_size: 128\n  overlap: 10\n"
                            "  working_folder: wf\n  probabilities: true\n");
  const auto job = inFolder(dir.path("run"), [&] {
    return fromCommandLine(classifyOptionTable(), config, {"--overlap", "20", "--input", "x.tif", "--polygons"});
  });
  EXPECT_EQ(job.options.window, 128);
  EXPECT_DOUBLE_EQ(job.options.overlap, 20);
  EXPECT_EQ(job.options.batch_size, ClassifyOptions{}.batch_size);
  EXPECT_EQ(job.options.model_path, dir.path("cfg/m/model.pt"));
  EXPECT_EQ(job.inputs, (std::vector<std::string>{dir.path("run/x.tif")}));
  const auto runs = classifyRuns(job);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].output, dir.path("cfg/wf/x_inference.tif"));
  EXPECT_EQ(runs[0].probabilities, dir.path("cfg/wf/x_inference_probabilities.tif"));
  EXPECT_EQ(runs[0].polygons, dir.path("cfg/wf/x_inference_polygons.gpkg"));
}

TEST(Precedence, BatchProbeDefaultsThenCommandLine) {
  const auto o = fromCommandLine(batchProbeOptionTable(), "", {"--sample-size", "64", "--no-confirm"});
  EXPECT_EQ(o.sample_size, 64);
  EXPECT_FALSE(o.confirm);
  EXPECT_EQ(o.model, BatchProbeOptions{}.model);
  EXPECT_DOUBLE_EQ(o.budget_mib, BatchProbeOptions{}.budget_mib);
}

TEST(Precedence, BadFlagValuesAreRefusedWithTheRangeInPlainNumbers) {
  try {
    fromCommandLine(trainOptionTable(), "", {"--threads", "-1"});
    FAIL();
  } catch (const CLI::ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("'-1' is not a whole number from 0 to 1024"), std::string::npos) << e.what();
  }
  test::expectErrorContaining([] { fromCommandLine(classifyOptionTable(), "", {"--device", "gpu"}); },
                              "--device has the value 'gpu', which is not one of auto, cpu, cuda, cuda:N");
  EXPECT_NO_THROW(fromCommandLine(classifyOptionTable(), "", {"--device", "cuda:1"}));
}

}  // namespace
}  // namespace geodl
