// The segmentation losses training minimises, on logits (N, C, H, W) and labels (N, H, W):
// all leave out the pixels labelled ignore_index and honour class weights where they apply.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace geodl {

enum class LossKind {
  CrossEntropy,  // the mean of -w_y log p_y over the pixels, divided by the mean weight
  Dice,          // 1 - soft Dice per class over the batch, averaged over the classes
  Focal,         // cross-entropy with each pixel's term scaled by (1 - p_y)^2
  Lovasz,        // Lovász-Softmax: a convex surrogate of 1 - IoU per present class
  CeDice,        // cross-entropy + Dice
  OhemCe,        // cross-entropy over the hard pixels only (online hard example mining)
};

// The names configs and flags use ("cross_entropy", "dice", ...), in LossKind's order.
const std::vector<std::string>& lossNames();
// The kind a name (of lossNames()) means; std::invalid_argument for an unknown one.
LossKind lossKind(const std::string& name);

struct LossOptions {
  LossKind kind = LossKind::CrossEntropy;
  int64_t ignore_index = -100;
  torch::Tensor class_weights;  // (C); undefined: all classes weigh the same
};

// The focal loss's focusing parameter (Lin et al.'s and geo-deep-learning's).
constexpr double kFocalGamma = 2.0;
// Online hard example mining (as geo-deep-learning's OhemCrossEntropy2d): the pixels whose
// true class has probability at most 0.7 are kept, and at least the 100000 hardest; with
// fewer valid pixels than that, all of them.
constexpr double kOhemThreshold = 0.7;
constexpr int64_t kOhemMinKept = 100000;

// The loss of `logits` against `labels`, a scalar. bfloat16 or half logits (autocast) are
// taken in float32; float64 stays float64.
torch::Tensor segmentationLoss(const torch::Tensor& logits, const torch::Tensor& labels,
                               const LossOptions& loss);

}  // namespace geodl
