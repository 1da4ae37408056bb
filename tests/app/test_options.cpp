// The option tables: one declaration per option, each default within its own range, the
// Processing parameter names users' models refer to unchanged, values checked with messages
// that name the source and the range.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "app/batch_probe_options.h"
#include "app/classify.h"
#include "app/data_parallel.h"
#include "app/demo_dataset.h"
#include "app/evaluate.h"
#include "app/data_folder.h"
#include "app/create_samples.h"
#include "app/train.h"
#include "cli/config.h"
#include "base/errors.h"
#include "io/gis_fixtures.h"

namespace geodl {
namespace {

template <class Options>
void expectWellFormed(const OptionTable<Options>& table, const std::set<std::string>& parameters) {
  std::set<std::string> names, flags, keys, found;
  for (const auto& o : table) {
    SCOPED_TRACE(o.name);
    EXPECT_TRUE(names.insert(o.name).second) << "two options named " << o.name;
    if (!o.flag.empty()) EXPECT_TRUE(flags.insert(o.flag).second) << "two options with --" << o.flag;
    if (!o.key.empty()) EXPECT_TRUE(keys.insert(o.key).second) << "two options with the key " << o.key;
    if (!o.parameter.empty()) {
      EXPECT_TRUE(found.insert(o.parameter).second) << "two options with the parameter " << o.parameter;
      EXPECT_STRNE(o.label, "") << "a parameter without label";
    }
    EXPECT_STRNE(o.help, "") << "an option without help";
    EXPECT_TRUE(bool(o.set)) << "an option that sets nothing";
    EXPECT_FALSE(o.key.empty() && o.flag.empty() && o.parameter.empty() && o.name != "vector_layer")
        << "an option nothing can set";
    // The one default (the struct's) is a value the option itself accepts.
    const std::string def = o.processing_default.empty() ? defaultText(o) : o.processing_default;
    if (!def.empty() && o.type != OptionType::List) {
      OptionValue v{{def}, def.front() == '[', "", "the default"};
      EXPECT_NO_THROW(parseOption(o, v)) << "default '" << def << "' is not " << describeExpected(o);
    }
  }
  EXPECT_EQ(found, parameters) << "the Processing parameters changed: saved models would not load";
}

TEST(OptionTables, EveryOptionIsDeclaredOnceWithADefaultInItsRange) {
  expectWellFormed(sampleOptionTable(),
                   {"INPUT", "VECTOR", "FIELD", "SPLIT", "VALIDATION_PERCENT", "VALIDATION_LAYER", "SAMPLE_SIZE",
                    "STRIDE", "MIN_ANNOTATED", "NUM_CLASSES", "IGNORE_VALUES", "UNLABELLED_IGNORED", "SEED",
                    "OUTPUT_FOLDER", "FOOTPRINT", "REMOVE_BACKGROUND", "MASK_INPUT_IMAGE", "MASK_REFERENCE",
                    // Added with resume (optional, advanced).
                    "RESUME"});
  expectWellFormed(trainOptionTable(),
                   {"TRAINING_STORE", "VALIDATION_STORE", "MODEL", "EPOCHS", "BATCH_SIZE", "LEARNING_RATE",
                    "WEIGHT_DECAY", "STEP_SIZE", "GAMMA", "CLASS_WEIGHTS", "CHECKPOINT", "DROPOUT",
                    "DROPOUT_PROBABILITY", "PRETRAINED", "ROTATE_LIMIT", "ROTATE_PROB", "HFLIP_PROB", "VFLIP_PROB",
                    "NUM_TRN_SAMPLES", "NUM_VAL_SAMPLES", "PATIENCE", "BEST_METRIC", "MEMORY_BUDGET_MIB", "SEED",
                    "DETERMINISTIC", "THREADS", "DEVICE", "PRECISION", "BF16", "RESUME", "OUTPUT_MODEL",
                    // Added with the losses, optimizers and schedules (optional: older models load).
                    "LOSS", "OPTIMIZER", "MOMENTUM", "NESTEROV", "SCHEDULER", "WARMUP_EPOCHS",
                    // Added with the ResNet UNets' pretrained encoders.
                    "PRETRAINED_ENCODER", "ENCODER_FREEZE_EPOCHS", "ENCODER_LR_FACTOR",
                    // Added with DOFA (optional, advanced).
                    "WAVELENGTHS"});
  expectWellFormed(classifyOptionTable(),
                   {"INPUT", "MODEL", "WINDOW", "OVERLAP", "BATCH_SIZE", "TTA", "EXTENT", "MASK", "MIN_AREA", "COG",
                    "DEVICE", "PRECISION", "THREADS", "OUTPUT", "PROBABILITIES", "POLYGONS", "MEMORY_BUDGET_MIB",
                    "ACCEPT_MISMATCH",
                    // Added with resampling to the model's pixel size (optional, advanced).
                    "RESAMPLE",
                    // Added with resume (optional, advanced).
                    "RESUME"});
  expectWellFormed(launchOptionTable(), {});
  expectWellFormed(demoOptionTable(), {});
  expectWellFormed(evaluateOptionTable(), {});
  expectWellFormed(batchProbeOptionTable(), {"MODEL", "SAMPLE_SIZE", "BANDS", "CLASSES", "CHECKPOINT", "BUDGET_MIB",
                                             "DEVICE", "THREADS", "CONFIRM"});
}

// checkOptions is the one check of ranges: every bounded option of every table refuses a
// field just past its bound, whoever set it, naming the option; the defaults pass.
template <class Options>
void expectBoundsChecked(const OptionTable<Options>& table) {
  EXPECT_NO_THROW(checkOptions(table, Options{}));
  int bounded = 0;
  for (const auto& o : table) {
    if (!(o.type == OptionType::Int || o.type == OptionType::Number) || !std::isfinite(o.min) || o.min < -1e15)
      continue;
    SCOPED_TRACE(o.name);
    Options filled;
    OptionInput below;
    below.integer = int64_t(o.min) - 1;
    below.number = o.type == OptionType::Int ? o.min - 1 : o.min - std::max(1e-3, std::abs(o.min));
    o.set(filled, below);
    test::expectErrorContaining([&] { checkOptions(table, filled); }, optionOrigin(o) + " has the value '");
    if (std::isfinite(o.max) && o.max < 1e15) {
      Options over;
      OptionInput above;
      above.integer = int64_t(o.max) + 1;
      above.number = o.type == OptionType::Int ? o.max + 1 : o.max + std::max(1e-3, std::abs(o.max));
      o.set(over, above);
      test::expectErrorContaining([&] { checkOptions(table, over); }, "which is not " + describeExpected(o));
    }
    ++bounded;
  }
  EXPECT_GT(bounded, 0);
}

TEST(OptionTables, CheckOptionsRefusesEveryFieldPastItsBound) {
  expectBoundsChecked(sampleOptionTable());
  expectBoundsChecked(trainOptionTable());
  expectBoundsChecked(classifyOptionTable());
  expectBoundsChecked(batchProbeOptionTable());
  expectBoundsChecked(launchOptionTable());
  expectBoundsChecked(demoOptionTable());
  EXPECT_EQ(optionOrigin(trainOptionTable().front()), "the option data_path (global.data_path, --data-path)");
  // A choice outside its list, and a list of numbers, as the struct holds them.
  TrainOptions o;
  o.class_weighting = ClassWeighting::Given;
  o.class_weights = {1, 2.5};
  EXPECT_NO_THROW(checkOptions(trainOptionTable(), o));
  o.loss = "hinge";
  test::expectErrorContaining([&] { checkOptions(trainOptionTable(), o); },
                              "the option loss (training.loss_fn, --loss, LOSS) has the value 'hinge', which is not "
                              "one of cross_entropy, dice");
}

// The run options are one declaration (RunOptions and its table fragment): every job that has
// one declares it alike, but for its config section, with RunOptions' default.
TEST(OptionTables, RunOptionsAreDeclaredOnceForEveryJob) {
  std::map<std::string, std::vector<const OptionInfo*>> seen;
  const auto collect = [&](const auto& table) {
    for (const auto& o : table)
      if (o.name == "device" || o.name == "threads" || o.name == "precision" || o.name == "memory_budget_mib" ||
          o.name == "collective_timeout")
        seen[o.name].push_back(&o);
  };
  collect(sampleOptionTable());
  collect(trainOptionTable());
  collect(classifyOptionTable());
  EXPECT_EQ(seen["collective_timeout"].size(), 3u);
  EXPECT_EQ(seen["device"].size(), 2u);
  for (const auto& [name, options] : seen)
    for (const OptionInfo* o : options) {
      SCOPED_TRACE(name + " of " + o->key);
      const OptionInfo& first = *options.front();
      EXPECT_EQ(o->flag, first.flag);
      EXPECT_EQ(o->parameter, first.parameter);
      EXPECT_EQ(o->min, first.min);
      EXPECT_EQ(o->max, first.max);
      EXPECT_STREQ(o->help, first.help);
      EXPECT_EQ(o->key.substr(o->key.find('.')), first.key.substr(first.key.find('.')));
    }
  EXPECT_EQ(TrainOptions{}.run.device, RunOptions{}.device);
  EXPECT_EQ(ClassifyOptions{}.run.collective_timeout, 300);
  EXPECT_EQ(BatchProbeOptions{}.device, RunOptions{}.device);  // core's default is the same constant
}

// One layout of the data folder: training reads the stores where the samples job writes them.
TEST(OptionTables, DataPathGivesTrainingTheStoresTheSamplesJobWrites) {
  const OptionValues values = {{"data_path", OptionValue{{"/data/run"}, false, "", "global.data_path"}}};
  SampleOptions samples;
  applyOptions(sampleOptionTable(), values, samples);
  TrainOptions training;
  applyOptions(trainOptionTable(), values, training);
  EXPECT_EQ(samples.output_folder, "/data/run/samples");
  EXPECT_EQ(training.train_store, storeOf(samples.output_folder, "trn"));
  EXPECT_EQ(training.val_store, storeOf(samples.output_folder, "val"));
  EXPECT_EQ(training.train_store, "/data/run/samples/trn_samples.hdf5");
  EXPECT_EQ(training.output_folder, "/data/run/model");
}

const OptionInfo& find(const std::string& name) {
  for (const auto& o : trainOptionTable())
    if (o.name == name) return o;
  throw std::runtime_error("no option " + name);
}

TEST(OptionTables, ValuesAreCheckedWithTheirOriginAndRange) {
  const auto value = [](std::vector<std::string> items, bool list = false) {
    return OptionValue{std::move(items), list, "/base", "the config key training.x"};
  };
  test::expectErrorContaining([&] { parseOption(find("threads"), value({"-1"})); },
                              "the config key training.x has the value '-1', which is not a whole number from 0 to 1024");
  test::expectErrorContaining([&] { parseOption(find("epochs"), value({"2.5"})); }, "not a whole number from 1");
  test::expectErrorContaining([&] { parseOption(find("learning_rate"), value({"fast"})); },
                              "which is not a number from 1e-09 to 10");
  test::expectErrorContaining([&] { parseOption(find("best_metric"), value({"iou"})); }, "not one of loss, miou");
  test::expectErrorContaining([&] { parseOption(find("deterministic"), value({"maybe"})); }, "not true or false");
  test::expectErrorContaining([&] { parseOption(find("epochs"), value({"1", "2"}, true)); }, "'[1, 2]'");
  EXPECT_EQ(parseOption(find("epochs"), value({"1e3"})).integer, 1000);  // a whole number in any notation
  EXPECT_EQ(parseOption(find("batch_size"), value({"auto"})).integer, 0);
  EXPECT_EQ(parseOption(find("pretrained"), value({"weights.pt"})).text, "/base/weights.pt");
  EXPECT_EQ(parseOption(find("pretrained"), value({"False"})).text, "");
  EXPECT_EQ(parseOption(find("class_weights"), value({"False"})).text, "false");
  EXPECT_EQ(parseOption(find("class_weights"), value({"1", "2"}, true)).list.size(), 2u);
  EXPECT_THROW(parseOption(find("class_weights"), value({"1", "heavy"}, true)), InputError);
  // A list of numbers, each checked against the table's range.
  EXPECT_EQ(parseOption(find("wavelengths"), value({"0.665", "0.56"}, true)).list.size(), 2u);
  test::expectErrorContaining([&] { parseOption(find("wavelengths"), value({"0.665", "560"}, true)); },
                              "has the value '[0.665, 560]', which is not a list of numbers from 0.01 to 20");
  test::expectErrorContaining([&] { parseOption(find("wavelengths"), value({"red"}, true)); },
                              "which is not a list of numbers");
}

TEST(OptionTables, EveryAcceptedKeyDoesSomethingOrSaysWhyNot) {
  test::TempDir dir;
  std::ofstream(dir.path("c.yaml")) << "global:\n  data_path: .\ntraining:\n  ignore_index: 0\n"
                                       "inference:\n  vector: true\nsample:\n  val_percent: 5\n";
  const YAML::Node config = cli::loadConfig(dir.path("c.yaml"));
  EXPECT_EQ(cli::unknownKeys(config), (std::vector<std::string>{"inference.vector"}));
  const auto warnings = cli::configWarnings(config);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("unknown config key 'inference.vector' is ignored; the keys of inference are: "
                             "accept_mismatch, batch_size, chunk_size"),
            std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[1].find("'training.ignore_index' has no effect in GeoDL: the ignore index comes from the sample "
                             "stores"),
            std::string::npos)
      << warnings[1];
  // The key every tool of geo-deep-learning's writes and GeoDL used to drop now splits.
  SampleOptions o;
  applyOptions(sampleOptionTable(), cli::configValues(config, sampleOptionTable(), dir.path("c.yaml")), o);
  EXPECT_EQ(o.split_mode, SplitMode::ValidationPercent);
  EXPECT_DOUBLE_EQ(o.validation_percent, 5);
}

TEST(OptionTables, EmptyAndListConfigsAreNamed) {
  test::TempDir dir;
  std::ofstream(dir.path("empty.yaml")) << "# nothing yet\n";
  std::ofstream(dir.path("list.yaml")) << "- global\n- sample\n";
  test::expectErrorContaining([&] { cli::loadConfig(dir.path("empty.yaml")); }, "is empty");
  test::expectErrorContaining([&] { cli::loadConfig(dir.path("list.yaml")); }, "is not a map of sections");
}

}  // namespace
}  // namespace geodl
