// Stage 2 of training: the model at its initial weights (the seed's, pretrained ones, or the
// resumed checkpoint's run), its normalization and loss, the batch size and checkpointing, the
// loaders, and what the model file will say; every rank builds the same run.
#include <algorithm>
#include <random>
#include <thread>

#include "app/train_stages.h"
#include "base/errors.h"
#include "base/metadata.h"
#include "core/device.h"
#include "core/ternausnet.h"
#include "io/band_statistics.h"
#include "model/model_file.h"

namespace geodl {

using nlohmann::json;

namespace {

// The model at its initial weights (the seed's, or pretrained ones).
SegmentationModel buildModel(const TrainOptions& options, const ModelSpec& spec, int64_t seed, Progress& progress) {
  torch::manual_seed(uint64_t(seed));
  ModelSpec plain = spec;
  plain.pretrained.clear();
  SegmentationModel model = makeModel(plain);
  if (!options.pretrained.empty() && !options.resume) {
    if (spec.architecture == Architecture::TernausNet && !isModelFile(options.pretrained))
      std::dynamic_pointer_cast<TernausNetImpl>(model)->loadVgg11Encoder(options.pretrained);
    else
      for (const auto& w : loadPretrainedWeights(*model, options.pretrained)) progress.log("warning: " + w);
    progress.log("weights initialised from " + options.pretrained);
  }
  if (!options.pretrained_encoder.empty() && !options.resume)
    for (const auto& line : model->loadPretrainedEncoder(options.pretrained_encoder))
      progress.log("pretrained encoder: " + line);
  return model;
}

// The inputs' normalization and value range: the store's band statistics, or measured on (up
// to 512 of) its samples for a store without them (geo-deep-learning's; GeoDL's older stores
// have no range).
void bandNormalization(const TrainOptions& options, const TrainPlan& plan, TrainingBands& bands, Progress& progress) {
  const auto& tm = plan.trn.metadata;
  bands.mean = tm.band_mean;
  bands.stdev = tm.band_std;
  bands.minimum = tm.band_min;
  bands.maximum = tm.band_max;
  const auto complete = [&](const std::vector<double>& v) { return int(v.size()) == tm.bands; };
  const bool has_statistics = complete(bands.mean) && complete(bands.stdev);
  if (has_statistics && complete(bands.minimum) && complete(bands.maximum)) return;
  const int64_t count = std::min<int64_t>(plan.n_trn, 512);
  const io::BandStatistics stats = io::measureStoreStatistics(options.train_store, count);
  if (!has_statistics) {
    bands.mean = stats.mean();
    bands.stdev = stats.stddev(1e-12);
  }
  bands.minimum = stats.minimum();
  bands.maximum = stats.maximum();
  progress.log(std::string("the training store has no ") + (has_statistics ? "value range" : "band statistics") +
               "; measured on " + std::to_string(count) + " samples");
}

LossOptions lossOptions(const TrainOptions& options, const TrainPlan& plan, Progress& progress) {
  const auto& tm = plan.trn.metadata;
  LossOptions loss;
  loss.kind = lossKind(options.loss);
  loss.ignore_index = tm.ignore_index;
  if (loss.kind != LossKind::CrossEntropy) progress.log("loss: " + options.loss);
  std::vector<double> weights;
  if (options.class_weighting == ClassWeighting::Given) weights = options.class_weights;
  if (options.class_weighting == ClassWeighting::Auto) {
    checkInput(int(tm.class_pixel_counts.size()) == plan.spec.classes,
          "class_weights: auto needs the training store's class pixel counts, which it does not "
          "have; give the weights as a list");
    weights = inverseFrequencyWeights(tm.class_pixel_counts);
  }
  if (!weights.empty()) {
    loss.class_weights = torch::tensor(weights, torch::kDouble).to(torch::kFloat);
    std::string text;
    for (double w : weights) text += " " + fixedText(w, 3);
    progress.log("class weights:" + text);
  }
  return loss;
}

// The loaders' options: training (shuffled, augmented) or validation.
LoaderOptions loaderOptions(const TrainOptions& options, const TrainPlan& plan, const std::vector<double>& mean,
                            const std::vector<double>& stdev, const TrainResult& result, bool training) {
  LoaderOptions lo;
  lo.mean = mean;
  lo.std = stdev;
  lo.num_classes = plan.spec.classes;
  lo.ignore_index = plan.trn.metadata.ignore_index;
  lo.seed = uint64_t(result.seed);
  lo.threads = options.loader_threads > 0 ? options.loader_threads
                                          : int(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
  lo.prefetch = options.prefetch_batches;
  lo.pin_memory = plan.on_gpu;
  lo.batch_size = result.batch_size;
  lo.store = training ? options.train_store : options.val_store;
  lo.samples = training ? plan.n_trn : plan.n_val;
  lo.shuffle = training;
  if (training) lo.augmentation = options.augmentation;
  lo.rank = options.run.world.rank;
  lo.world_size = options.run.world.size;
  lo.equal_shares = training;  // every rank takes as many steps (a step is a collective)
  lo.drop_single = training;
  return lo;
}

}  // namespace

BuiltRun buildRun(const TrainOptions& options, TrainPlan& plan, const Checkpoint* resumed, TrainResult& result,
                  DataParallel& ranks, Progress& progress) {
  // With ranks, each uses its share of the cores unless threads says otherwise.
  const WorldInfo& world = options.run.world;
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  result.threads = configureThreads(options.run.threads == 0 && world.local_size > 1
                                        ? std::max(1, cores / world.local_size) : options.run.threads);
  if (options.deterministic) at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/true);
  configureCudnn(plan.device_name, options.deterministic);
  result.seed = ranks.rankZeroValue(resumed ? resumed->state.seed
                                             : options.seed >= 0 ? options.seed : int64_t(std::random_device{}() >> 1));
  if (resumed) result.epochs = resumed->state.epochs;
  SegmentationModel model;
  TrainingBands bands;
  const std::vector<double>& mean = bands.mean;
  const std::vector<double>& stdev = bands.stdev;
  LossOptions loss;
  ranks.together([&] {
    model = buildModel(options, plan.spec, result.seed, progress);
    bandNormalization(options, plan, bands, progress);
    loss = lossOptions(options, plan, progress);
    result.batch_size = chooseBatchSize(options, plan, resumed, result, progress);
  });
  // Each rank probed its own memory: the smallest batch fits them all, and checkpointing
  // where any rank needs it.
  result.batch_size = int(ranks.minimum(result.batch_size));
  ranks.together([&] { plan.spec.checkpoint = chooseCheckpointing(options, plan, result, progress); });
  plan.spec.checkpoint = ranks.minimum(plan.spec.checkpoint ? 0 : 1) == 0;
  model->setCheckpointing(plan.spec.checkpoint);
  result.checkpointing = plan.spec.checkpoint;
  ModelInfo info = describeModel(options, plan, bands, result);
  json record = trainingRecord(options, plan, result, ranks.size());
  // Every rank must train the same run: the options, the data, the version.
  json same = record;
  same["engine_version"] = metadata::kVersion;
  same["band_mean"] = mean;
  same["band_std"] = stdev;
  same["resumed_epochs"] = result.epochs.size();
  ranks.checkSameRun(same.dump());
  BuiltRun run;
  run.model = model;
  run.loss = loss;
  run.train_loader = std::make_unique<BatchLoader>(loaderOptions(options, plan, mean, stdev, result, true));
  run.val_loader = std::make_unique<BatchLoader>(loaderOptions(options, plan, mean, stdev, result, false));
  run.info = std::move(info);
  run.record = std::move(record);
  return run;
}

}  // namespace geodl
