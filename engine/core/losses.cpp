#include "core/losses.h"

#include <torch/torch.h>

#include <stdexcept>

namespace geodl {

namespace {

namespace F = torch::nn::functional;

// What every loss needs: the logits in a type the loss is exact in, the valid pixels, the
// labels with the ignored ones set to class 0 (masked out wherever they would count), and
// the class weights in the logits' type.
struct LossInput {
  torch::Tensor logits;   // (N, C, H, W)
  torch::Tensor valid;    // (N, H, W) bool
  torch::Tensor labels;   // (N, H, W) int64, 0 where not valid
  torch::Tensor weights;  // (C)
  int64_t classes = 0;
};

LossInput prepare(const torch::Tensor& logits, const torch::Tensor& labels, const LossOptions& loss) {
  LossInput in;
  in.logits = logits.scalar_type() == torch::kDouble ? logits : logits.to(torch::kFloat);
  in.classes = logits.size(1);
  in.valid = labels != loss.ignore_index;
  in.labels = labels.masked_fill(in.valid.logical_not(), 0);
  in.weights = loss.class_weights.defined()
                   ? loss.class_weights.to(in.logits.device(), in.logits.scalar_type())
                   : torch::ones({in.classes}, in.logits.options());
  return in;
}

torch::Tensor crossEntropy(const torch::Tensor& logits, const torch::Tensor& labels, const LossOptions& loss) {
  auto options = F::CrossEntropyFuncOptions().ignore_index(loss.ignore_index);
  const auto x = logits.scalar_type() == torch::kDouble ? logits : logits.to(torch::kFloat);
  if (loss.class_weights.defined()) options.weight(loss.class_weights.to(x.device(), x.scalar_type()));
  return F::cross_entropy(x, labels, options);
}

// The probabilities (N, C, H, W) and the one-hot truth, both zero on the pixels left out.
std::pair<torch::Tensor, torch::Tensor> probabilitiesAndTruth(const LossInput& in) {
  const auto mask = in.valid.unsqueeze(1).to(in.logits.scalar_type());
  const auto p = torch::softmax(in.logits, 1) * mask;
  const auto t = F::one_hot(in.labels, in.classes).permute({0, 3, 1, 2}).to(in.logits.scalar_type()) * mask;
  return {p, t};
}

// segmentation-models-pytorch's multiclass DiceLoss (smooth 0, eps 1e-7): per class c over
// the batch, dice_c = 2 sum(p_c t_c) / max(sum(p_c) + sum(t_c), eps); the loss is the mean
// of w_c (1 - dice_c) over the classes, weighted, a class absent from the batch's truth
// adding 0.
torch::Tensor dice(const LossInput& in) {
  const auto [p, t] = probabilitiesAndTruth(in);
  const std::vector<int64_t> dims = {0, 2, 3};
  const auto intersection = (p * t).sum(dims);
  const auto cardinality = (p + t).sum(dims);
  const auto score = 2 * intersection / cardinality.clamp_min(1e-7);
  const auto present = (t.sum(dims) > 0).to(p.scalar_type());
  return (in.weights * (1 - score) * present).sum() / in.weights.sum();
}

// Focal: sum over the valid pixels of w_y (1 - p_y)^gamma (-log p_y), divided by the sum of
// their w_y (cross-entropy's weighted mean; gamma 0 is cross-entropy).
torch::Tensor focal(const LossInput& in) {
  const auto log_p = torch::log_softmax(in.logits, 1).gather(1, in.labels.unsqueeze(1)).squeeze(1);
  const auto w = in.weights.index_select(0, in.labels.flatten()).view_as(log_p) *
                 in.valid.to(log_p.scalar_type());
  const auto term = w * (1 - log_p.exp()).pow(kFocalGamma) * (-log_p);
  return term.sum() / w.sum();
}

// Lovász-Softmax (Berman, Rannen Triki and Blaschko, 2018), over the batch's valid pixels:
// for each class present in the truth, the errors |t_c - p_c| sorted in decreasing order,
// dotted with the gradient of the Lovász extension of the Jaccard loss at that order,
//   g_1 = J_1, g_i = J_i - J_(i-1), J_i = 1 - (G - cumsum(t)_i) / (G + cumsum(1 - t)_i),
// G the class's pixels; the loss is the mean over the present classes, weighted.
torch::Tensor lovasz(const LossInput& in) {
  const auto valid = in.valid.flatten();
  const auto p = torch::softmax(in.logits, 1).permute({0, 2, 3, 1}).reshape({-1, in.classes}).index({valid});
  const auto labels = in.labels.flatten().index({valid});
  torch::Tensor total = in.logits.sum() * 0;  // 0, joined to the graph
  torch::Tensor weight = torch::zeros({}, in.logits.options());
  for (int64_t c = 0; c < in.classes; ++c) {
    const auto t = (labels == c).to(p.scalar_type());
    const double pixels = t.sum().item<double>();
    if (pixels == 0) continue;
    const auto errors = (t - p.select(1, c)).abs();
    const auto [sorted, order] = errors.sort(/*dim=*/0, /*descending=*/true);
    const auto t_sorted = t.index_select(0, order);
    const auto intersection = pixels - t_sorted.cumsum(0);
    const auto unions = pixels + (1 - t_sorted).cumsum(0);
    auto jaccard = 1 - intersection / unions;
    const int64_t n = jaccard.size(0);
    if (n > 1) jaccard = torch::cat({jaccard.slice(0, 0, 1), jaccard.slice(0, 1, n) - jaccard.slice(0, 0, n - 1)});
    total = total + in.weights[c] * (sorted * jaccard).sum();
    weight = weight + in.weights[c];
  }
  return weight.item<double>() > 0 ? total / weight : total;
}

// Online hard example mining: cross-entropy over the valid pixels whose true class has
// probability at most kOhemThreshold, raised to the kOhemMinKept-th lowest probability when
// fewer pixels than that are under it; all valid pixels when there are at most kOhemMinKept.
torch::Tensor ohemCrossEntropy(const torch::Tensor& logits, const torch::Tensor& labels, const LossOptions& loss) {
  const LossInput in = prepare(logits, labels, loss);
  torch::Tensor kept_labels = labels;
  const int64_t valid_pixels = in.valid.sum().item<int64_t>();
  if (valid_pixels > kOhemMinKept) {
    torch::NoGradGuard no_grad;
    const auto p = torch::softmax(in.logits, 1).gather(1, in.labels.unsqueeze(1)).squeeze(1);
    const auto p_valid = p.index({in.valid});
    double threshold = kOhemThreshold;
    const double kth = std::get<0>(p_valid.kthvalue(kOhemMinKept)).item<double>();
    if (kth > threshold) threshold = kth;
    const auto kept = in.valid.logical_and(p <= threshold);
    kept_labels = labels.masked_fill(kept.logical_not(), loss.ignore_index);
  }
  return crossEntropy(logits, kept_labels, loss);
}

}  // namespace

const std::vector<std::string>& lossNames() {
  static const std::vector<std::string> names = {"cross_entropy", "dice", "focal", "lovasz", "ce_dice", "ohem_ce"};
  return names;
}

LossKind lossKind(const std::string& name) {
  const auto& names = lossNames();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return LossKind(i);
  throw std::invalid_argument("unknown loss '" + name + "'");
}

torch::Tensor segmentationLoss(const torch::Tensor& logits, const torch::Tensor& labels,
                               const LossOptions& loss) {
  switch (loss.kind) {
    case LossKind::CrossEntropy:
      return crossEntropy(logits, labels, loss);
    case LossKind::Dice:
      return dice(prepare(logits, labels, loss));
    case LossKind::Focal:
      return focal(prepare(logits, labels, loss));
    case LossKind::Lovasz:
      return lovasz(prepare(logits, labels, loss));
    case LossKind::CeDice:
      return crossEntropy(logits, labels, loss) + dice(prepare(logits, labels, loss));
    case LossKind::OhemCe:
      return ohemCrossEntropy(logits, labels, loss);
  }
  throw std::logic_error("unhandled loss kind");
}

}  // namespace geodl
