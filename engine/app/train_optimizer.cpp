// Stage 3 of training: the optimizer over the model's parameter groups, the learning-rate
// schedule, and the run's state at its start (a resumed one's restored).
#include <cmath>
#include <set>

#include "app/train_stages.h"
#include "base/errors.h"

namespace geodl {

// The optimizer the options name, over the model's parameters: models with an encoder get
// two groups, the encoder's first (its own learning rate, see encoderRate).
std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const TrainOptions& o, SegmentationModelImpl& model) {
  namespace optim = torch::optim;
  std::vector<optim::OptimizerParamGroup> groups;
  const auto encoder = model.encoderParameters();
  if (encoder.empty()) {
    groups.emplace_back(model.parameters());
  } else {
    std::set<const void*> in_encoder;
    for (const auto& p : encoder) in_encoder.insert(p.unsafeGetTensorImpl());
    std::vector<torch::Tensor> rest;
    for (const auto& p : model.parameters())
      if (!in_encoder.count(p.unsafeGetTensorImpl())) rest.push_back(p);
    groups.emplace_back(encoder);
    groups.emplace_back(rest);
  }
  if (o.optimizer == "adamw")
    return std::make_unique<optim::AdamW>(std::move(groups),
                                          optim::AdamWOptions(o.learning_rate).weight_decay(o.weight_decay));
  if (o.optimizer == "sgd")
    return std::make_unique<optim::SGD>(std::move(groups), optim::SGDOptions(o.learning_rate)
                                                               .momentum(o.momentum)
                                                               .nesterov(o.nesterov)
                                                               .weight_decay(o.weight_decay));
  return std::make_unique<optim::Adam>(std::move(groups),
                                       optim::AdamOptions(o.learning_rate).weight_decay(o.weight_decay));
}

double encoderRate(const TrainOptions& o, int epoch) {
  return epoch <= o.encoder_freeze_epochs ? 0.0 : o.encoder_lr_factor;
}

Schedule learningRateSchedule(const TrainOptions& o, int64_t steps_per_epoch) {
  Schedule s;
  s.kind = scheduleKind(o.scheduler);
  s.base = o.learning_rate;
  s.epochs = o.epochs;
  s.steps_per_epoch = steps_per_epoch;
  s.step_size = o.step_size;
  s.gamma = o.gamma;
  s.warmup_epochs = o.warmup_epochs;
  return s;
}

RunState startState(const TrainOptions& options, Checkpoint* resumed, TrainResult& result,
                    SegmentationModelImpl& model, torch::optim::Optimizer& optimizer, const torch::Device& device,
                    Progress& progress) {
  RunState state;
  state.optimizer = options.optimizer;
  state.seed = result.seed;
  state.batch_size = result.batch_size;
  state.best = options.best_metric == "loss" ? INFINITY : -INFINITY;
  if (!resumed) return state;
  if (resumed->state.optimizer != options.optimizer)
    throw InputError("the checkpoint was trained with optimizer " + resumed->state.optimizer + ", not " +
                     options.optimizer + "; resume with --optimizer " + resumed->state.optimizer +
                     ", or run again without --resume (it starts from epoch 1)");
  state.best = resumed->state.best;
  state.since_best = resumed->state.since_best;
  result.best_epoch = resumed->state.best_epoch;
  for (const auto& w : resumed->model->warnings) progress.log("warning: " + w);
  restoreCheckpoint(*resumed, model, optimizer, device);
  return state;
}

}  // namespace geodl
