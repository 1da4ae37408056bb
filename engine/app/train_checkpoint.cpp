#include "app/train_checkpoint.h"

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "core/torch_compat.h"

namespace geodl {

using nlohmann::json;

namespace {

constexpr const char* kCheckpointKey = "geodl_checkpoint";
constexpr const char* kOptimizerKey = "optimizer";
constexpr const char* kOptimizerDigestKey = "geodl_optimizer_digest";

// A digest of the optimizer's state (learning rates, and each parameter's moments in the
// parameters' order), to tell a damaged checkpoint from a good one.
std::string optimizerDigest(torch::optim::Optimizer& optimizer) {
  uint64_t hash = kDigestStart;
  for (auto& group : optimizer.param_groups()) {
    const double lr = group.options().get_lr();
    addToDigest(hash, &lr, sizeof lr);
    for (const auto& p : group.params()) {
      auto it = optimizer.state().find(compat::optimizerStateKey(p));
      if (it == optimizer.state().end()) continue;
      if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(it->second.get())) {
        const int64_t step = adam->step();
        addToDigest(hash, &step, sizeof step);
        addToDigest(hash, adam->exp_avg());
        addToDigest(hash, adam->exp_avg_sq());
        addToDigest(hash, adam->max_exp_avg_sq());
      } else if (auto* adamw = dynamic_cast<torch::optim::AdamWParamState*>(it->second.get())) {
        const int64_t step = adamw->step();
        addToDigest(hash, &step, sizeof step);
        addToDigest(hash, adamw->exp_avg());
        addToDigest(hash, adamw->exp_avg_sq());
        addToDigest(hash, adamw->max_exp_avg_sq());
      } else if (auto* sgd = dynamic_cast<torch::optim::SGDParamState*>(it->second.get())) {
        addToDigest(hash, sgd->momentum_buffer());
      }
    }
  }
  return digestText(hash);
}

json metricsToJson(const SegmentationMetrics& m) {
  json classes = json::array();
  for (const auto& c : m.per_class)
    classes.push_back({{"iou", c.iou}, {"precision", c.precision}, {"recall", c.recall},
                       {"f1", c.f1}, {"support", c.support}, {"present", c.present}});
  return {{"mean_iou", m.mean_iou}, {"pixel_accuracy", m.pixel_accuracy}, {"pixels", m.pixels},
          {"per_class", classes}};
}

SegmentationMetrics metricsFromJson(const json& j) {
  SegmentationMetrics m;
  m.mean_iou = j.at("mean_iou");
  m.pixel_accuracy = j.at("pixel_accuracy");
  m.pixels = j.at("pixels");
  for (const auto& c : j.at("per_class"))
    m.per_class.push_back({c.at("iou"), c.at("precision"), c.at("recall"), c.at("f1"),
                           c.at("support"), c.at("present")});
  return m;
}

json recordToJson(const EpochRecord& r) {
  return {{"epoch", r.epoch}, {"learning_rate", r.learning_rate}, {"train_loss", r.train_loss},
          {"val_loss", r.val_loss}, {"val", metricsToJson(r.val)}, {"seconds", r.seconds},
          {"data_wait", r.data_wait}, {"forward", r.forward}, {"backward", r.backward},
          {"optimizer", r.optimizer}, {"validation", r.validation},
          {"samples_per_second", r.samples_per_second}};
}

EpochRecord recordFromJson(const json& j) {
  EpochRecord r;
  r.epoch = j.at("epoch");
  r.learning_rate = j.at("learning_rate");
  r.train_loss = j.at("train_loss");
  r.val_loss = j.at("val_loss");
  r.val = metricsFromJson(j.at("val"));
  r.seconds = j.at("seconds");
  r.data_wait = j.at("data_wait");
  r.forward = j.at("forward");
  r.backward = j.at("backward");
  r.optimizer = j.at("optimizer");
  r.validation = j.at("validation");
  r.samples_per_second = j.at("samples_per_second");
  return r;
}

}  // namespace

std::string metricsJson(const SegmentationMetrics& metrics) { return metricsToJson(metrics).dump(); }

Checkpoint loadCheckpoint(const std::string& path) {
  Checkpoint c;
  json state;
  try {
    c.model = std::make_unique<LoadedModel>(loadModelFile(path, [&](torch::serialize::InputArchive& archive) {
    c10::IValue value;
    if (!archive.try_read(kCheckpointKey, value) || !value.isString())
      throw InputError("'" + path + "' is a model file, not a training checkpoint; run without --resume");
    state = json::parse(value.toStringRef());
    archive.read(kOptimizerKey, c.optimizer);
    if (archive.try_read(kOptimizerDigestKey, value) && value.isString()) c.optimizer_digest = value.toStringRef();
  }));
  } catch (const InputError& e) {
    throw InputError("cannot resume from the checkpoint: " + std::string(e.what()) +
                     "; run again without --resume (it starts from epoch 1) or restore the checkpoint");
  }
  c.state.seed = state.at("seed");
  c.state.batch_size = state.at("batch_size");
  c.state.best = state.at("best");
  c.state.best_epoch = state.at("best_epoch");
  c.state.since_best = state.at("since_best");
  c.state.optimizer = state.value("optimizer", std::string("adam"));
  c.state.optimizer_lrs = state.value("optimizer_lrs", std::vector<double>{});
  for (const auto& r : state.at("epochs")) c.state.epochs.push_back(recordFromJson(r));
  if (c.state.optimizer_lrs.empty() && !c.state.epochs.empty())
    c.state.optimizer_lrs = {c.state.epochs.back().learning_rate};
  return c;
}

void saveCheckpoint(const std::string& path, const ModelInfo& info, SegmentationModelImpl& model,
                    torch::optim::Optimizer& optimizer, const RunState& state) {
  json s = {{"epoch", state.epochs.empty() ? 0 : state.epochs.back().epoch}, {"seed", state.seed},
            {"batch_size", state.batch_size}, {"best", state.best}, {"best_epoch", state.best_epoch},
            {"since_best", state.since_best}, {"optimizer", state.optimizer},
            {"optimizer_lrs", json::array()}, {"epochs", json::array()}};
  for (auto& group : optimizer.param_groups()) s["optimizer_lrs"].push_back(group.options().get_lr());
  for (const auto& e : state.epochs) s["epochs"].push_back(recordToJson(e));
  saveModelFile(path, info, model, [&](torch::serialize::OutputArchive& archive) {
    torch::serialize::OutputArchive opt;
    optimizer.save(opt);
    archive.write(kOptimizerKey, opt);
    archive.write(kOptimizerDigestKey, c10::IValue(optimizerDigest(optimizer)));
    archive.write(kCheckpointKey, c10::IValue(s.dump()));
  }, "the checkpoint");
}

void restoreCheckpoint(Checkpoint& checkpoint, SegmentationModelImpl& model, torch::optim::Optimizer& optimizer,
                       const torch::Device& device) {
  optimizer.load(checkpoint.optimizer);
  // load() leaves the rate the optimizer was built with; the saved one is what the digest
  // covers (the schedule sets the rate again before every step).
  auto& groups = optimizer.param_groups();
  const auto& lrs = checkpoint.state.optimizer_lrs;
  for (size_t g = 0; g < groups.size() && !lrs.empty(); ++g) groups[g].options().set_lr(lrs[std::min(g, lrs.size() - 1)]);
  if (!checkpoint.optimizer_digest.empty() && checkpoint.optimizer_digest != optimizerDigest(optimizer))
    throw InputError("the checkpoint is damaged: its optimizer state differs from the digest written when it "
                     "was saved (a bad copy or a failing disk); run again without --resume (it starts from "
                     "epoch 1)");
  {
    torch::NoGradGuard no_grad;
    auto target = model.named_parameters(), source = checkpoint.model->model->named_parameters();
    for (auto& p : target) p.value().copy_(source[p.key()]);
    auto tb = model.named_buffers(), sb = checkpoint.model->model->named_buffers();
    for (auto& b : tb) b.value().copy_(sb[b.key()]);
  }
  checkpoint.model.reset();
  // The optimizer's state was loaded on the CPU: move it beside the parameters.
  if (device.is_cuda())
    for (auto& entry : optimizer.state()) {
      if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(entry.second.get())) {
        adam->exp_avg(adam->exp_avg().to(device));
        adam->exp_avg_sq(adam->exp_avg_sq().to(device));
      } else if (auto* adamw = dynamic_cast<torch::optim::AdamWParamState*>(entry.second.get())) {
        adamw->exp_avg(adamw->exp_avg().to(device));
        adamw->exp_avg_sq(adamw->exp_avg_sq().to(device));
      } else if (auto* sgd = dynamic_cast<torch::optim::SGDParamState*>(entry.second.get())) {
        if (sgd->momentum_buffer().defined()) sgd->momentum_buffer(sgd->momentum_buffer().to(device));
      }
    }
}

}  // namespace geodl
