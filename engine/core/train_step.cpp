#include "core/train_step.h"

namespace geodl {

torch::Tensor segmentationLoss(const torch::Tensor& logits, const torch::Tensor& labels,
                               const LossOptions& loss) {
  auto options = torch::nn::functional::CrossEntropyFuncOptions().ignore_index(loss.ignore_index);
  if (loss.class_weights.defined()) options.weight(loss.class_weights);
  return torch::nn::functional::cross_entropy(logits, labels, options);
}

double trainStep(SegmentationModelImpl& model, torch::optim::Optimizer& optimizer,
                 const Batch& batch, const LossOptions& loss, const GradientHook& after_backward) {
  model.train();
  optimizer.zero_grad();
  torch::Tensor value = segmentationLoss(model.forward(batch.images), batch.labels, loss);
  value.backward();
  if (after_backward) after_backward(model);
  optimizer.step();
  return value.item<double>();
}

}  // namespace geodl
