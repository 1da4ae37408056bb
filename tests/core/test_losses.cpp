// The losses against values worked out by hand on tiny tensors, their gradients against
// finite differences, and what they must leave out (ignored pixels) or honour (weights).
#include <torch/torch.h>

#include <gtest/gtest.h>

#include <cmath>

#include "core/losses.h"

namespace geodl {
namespace {

constexpr int64_t kIgnore = 255;

LossOptions lossOf(LossKind kind, std::vector<double> weights = {}) {
  LossOptions o;
  o.kind = kind;
  o.ignore_index = kIgnore;
  if (!weights.empty()) o.class_weights = torch::tensor(weights, torch::kDouble);
  return o;
}

double lossValue(LossKind kind, const torch::Tensor& logits, const torch::Tensor& labels,
                 std::vector<double> weights = {}) {
  return segmentationLoss(logits, labels, lossOf(kind, weights)).item<double>();
}

// Two classes, two pixels: logits (2, 0) labelled 0 and (0, 1) labelled 1, so that
// p0 = sigmoid(2) = 0.880797 (of class 0 at the first pixel) and q = sigmoid(-1) = 0.268941
// (of class 0 at the second). A third pixel, labelled ignore, holds logits that would
// change every loss.
torch::Tensor twoPixelLogits(bool with_ignored) {
  auto x = torch::tensor({2.0, 0.0, 5.0, 0.0, 1.0, -3.0}, torch::kDouble).view({1, 2, 1, 3});
  return with_ignored ? x : x.slice(3, 0, 2).contiguous();
}
torch::Tensor twoPixelLabels(bool with_ignored) {
  auto y = torch::tensor({0, 1, int(kIgnore)}, torch::kLong).view({1, 1, 3});
  return with_ignored ? y : y.slice(2, 0, 2).contiguous();
}

TEST(Losses, NamesAreGeoDeepLearningsAndMapToKinds) {
  EXPECT_EQ(lossNames(), (std::vector<std::string>{"cross_entropy", "dice", "focal", "lovasz", "ce_dice", "ohem_ce"}));
  EXPECT_EQ(lossKind("lovasz"), LossKind::Lovasz);
  EXPECT_THROW(lossKind("hinge"), std::invalid_argument);
}

TEST(Losses, UniformLogitsGiveTheTextbookValues) {
  // Zero logits: p = 1/2 everywhere; labels 0 and 1.
  const auto x = torch::zeros({1, 2, 1, 2}, torch::kDouble);
  const auto y = torch::tensor({0, 1}, torch::kLong).view({1, 1, 2});
  const double ln2 = std::log(2.0);
  EXPECT_NEAR(lossValue(LossKind::CrossEntropy, x, y), ln2, 1e-12);
  // Each class: 2 * 1/2 / (1 + 1) = 1/2.
  EXPECT_NEAR(lossValue(LossKind::Dice, x, y), 0.5, 1e-12);
  // (1 - 1/2)^2 ln 2.
  EXPECT_NEAR(lossValue(LossKind::Focal, x, y), 0.25 * ln2, 1e-12);
  // Errors 1/2, 1/2 against the Jaccard gradient (1, 0) or (1/2, 1/2): 1/2 either way.
  EXPECT_NEAR(lossValue(LossKind::Lovasz, x, y), 0.5, 1e-12);
  EXPECT_NEAR(lossValue(LossKind::CeDice, x, y), ln2 + 0.5, 1e-12);
  // Two pixels, fewer than the 100000 kept at least: plain cross-entropy.
  EXPECT_NEAR(lossValue(LossKind::OhemCe, x, y), ln2, 1e-12);
}

TEST(Losses, HandComputedValuesWithAndWithoutWeightsLeaveIgnoredPixelsOut) {
  const double p0 = 1 / (1 + std::exp(-2.0)), q = 1 / (1 + std::exp(1.0));
  const double ce0 = -std::log(p0), ce1 = -std::log(1 - q);
  // Cross-entropy: (ce0 + ce1) / 2; weights (1, 3): (ce0 + 3 ce1) / 4.
  const double ce = 0.2200948493, ce_w = 0.2666782684;
  // Focal: the terms (1 - p0)^2 ce0 and q^2 ce1.
  const double focal = 0.0122308102, focal_w = 0.0174444338;
  // Dice: class 0, 2 p0 / (p0 + q + 1) = 0.819447; class 1, 2 (1 - q) / ((1 - p0) + (1 - q) + 1)
  // = 0.790220; the mean of 1 - dice.
  const double dice = 0.1951661570, dice_w = 0.2024721288;
  // Lovász: class 0's errors sorted, (q: t 0, 1 - p0: t 1), meet the Jaccard gradient
  // (1/2, 1/2); class 1's, (q: t 1, 1 - p0: t 0), meet (1, 0).
  const double lovasz = 0.2315067965, lovasz_w = 0.2502241090;
  EXPECT_NEAR(ce, (ce0 + ce1) / 2, 1e-9);
  EXPECT_NEAR(lovasz, (0.5 * (q + 1 - p0) + q) / 2, 1e-9);
  for (bool ignored : {false, true}) {
    SCOPED_TRACE(ignored ? "with an ignored pixel" : "two pixels");
    const auto x = twoPixelLogits(ignored);
    const auto y = twoPixelLabels(ignored);
    EXPECT_NEAR(lossValue(LossKind::CrossEntropy, x, y), ce, 1e-9);
    EXPECT_NEAR(lossValue(LossKind::CrossEntropy, x, y, {1, 3}), ce_w, 1e-9);
    EXPECT_NEAR(lossValue(LossKind::Focal, x, y), focal, 1e-9);
    EXPECT_NEAR(lossValue(LossKind::Focal, x, y, {1, 3}), focal_w, 1e-9);
    EXPECT_NEAR(lossValue(LossKind::Dice, x, y), dice, 1e-9);
    EXPECT_NEAR(lossValue(LossKind::Dice, x, y, {1, 3}), dice_w, 1e-9);
    EXPECT_NEAR(lossValue(LossKind::Lovasz, x, y), lovasz, 1e-9);
    EXPECT_NEAR(lossValue(LossKind::Lovasz, x, y, {1, 3}), lovasz_w, 1e-9);
    EXPECT_NEAR(lossValue(LossKind::CeDice, x, y), ce + dice, 1e-9);
    EXPECT_NEAR(lossValue(LossKind::OhemCe, x, y), ce, 1e-9);
  }
}

TEST(Losses, PerfectPredictionsCostNothingAndAbsentClassesAddNothing) {
  // Three classes, only 0 and 2 in the truth, predicted with logits of +-30.
  const auto y = torch::tensor({0, 2, 2, 0}, torch::kLong).view({1, 2, 2});
  const auto x = (torch::nn::functional::one_hot(y, 3).permute({0, 3, 1, 2}).to(torch::kDouble) * 60 - 30);
  EXPECT_NEAR(lossValue(LossKind::Dice, x, y), 0, 1e-9);
  EXPECT_NEAR(lossValue(LossKind::Lovasz, x, y), 0, 1e-9);
  EXPECT_NEAR(lossValue(LossKind::Focal, x, y), 0, 1e-9);
  // Uniform logits: class 1 is absent and adds 0, yet counts in the mean over 3 classes.
  // Classes 0 and 2: 2 (2/3) / (4/3 + 2) = 2/5, so (2 (1 - 2/5) + 0) / 3 = 2/5.
  EXPECT_NEAR(lossValue(LossKind::Dice, torch::zeros_like(x), y), 0.4, 1e-12);
}

// Binary logits (a, 0) with sigmoid(a) = p for a pixel of class 0 whose probability is p.
torch::Tensor logitsWithProbabilities(const std::vector<std::pair<int64_t, double>>& runs) {
  std::vector<double> a;
  for (auto [count, p] : runs) a.insert(a.end(), size_t(count), std::log(p / (1 - p)));
  const auto first = torch::tensor(a, torch::kDouble).view({1, 1, 1, -1});
  return torch::cat({first, torch::zeros_like(first)}, 1);
}

TEST(Losses, OhemKeepsTheHardPixelsAndAtLeastItsMinimum) {
  // 120000 hard pixels (p 0.3) and 40000 easy ones (0.99): more hard ones than the minimum,
  // so only those under 0.7 count: -ln 0.3.
  auto x = logitsWithProbabilities({{120000, 0.3}, {40000, 0.99}});
  auto y = torch::zeros({1, 1, x.size(3)}, torch::kLong);
  EXPECT_EQ(kOhemMinKept, 100000);
  EXPECT_NEAR(lossValue(LossKind::OhemCe, x, y), -std::log(0.3), 1e-9);
  // 50000 hard, 50000 at 0.8 and 60000 easy: the 100000th lowest probability, 0.8, becomes
  // the threshold: (-ln 0.3 - ln 0.8) / 2.
  x = logitsWithProbabilities({{50000, 0.3}, {50000, 0.8}, {60000, 0.99}});
  y = torch::zeros({1, 1, x.size(3)}, torch::kLong);
  EXPECT_NEAR(lossValue(LossKind::OhemCe, x, y), (-std::log(0.3) - std::log(0.8)) / 2, 1e-9);
  EXPECT_GT(lossValue(LossKind::OhemCe, x, y), lossValue(LossKind::CrossEntropy, x, y));
}

TEST(Losses, GradientsMatchFiniteDifferences) {
  torch::manual_seed(5);
  const auto x0 = torch::randn({2, 3, 3, 4}, torch::kDouble);
  auto y = torch::randint(0, 3, {2, 3, 4}, torch::kLong);
  y[0][1][2] = kIgnore;
  y[1][0][0] = kIgnore;
  for (size_t k = 0; k < lossNames().size(); ++k) {
    const auto kind = LossKind(k);
    SCOPED_TRACE(lossNames()[k]);
    for (const std::vector<double>& weights : {std::vector<double>{}, std::vector<double>{0.5, 2, 1}}) {
      auto x = x0.clone().requires_grad_(true);
      segmentationLoss(x, y, lossOf(kind, weights)).backward();
      const auto analytic = x.grad().flatten();
      const auto flat = x0.flatten();
      const double h = 1e-6;
      double worst = 0;
      for (int64_t i = 0; i < flat.numel(); ++i) {
        auto plus = flat.clone(), minus = flat.clone();
        plus[i] += h;
        minus[i] -= h;
        const double numeric = (lossValue(kind, plus.view_as(x0), y, weights) -
                                lossValue(kind, minus.view_as(x0), y, weights)) / (2 * h);
        worst = std::max(worst, std::abs(numeric - analytic[i].item<double>()));
      }
      EXPECT_LT(worst, 1e-6);
      // The ignored pixels get no gradient.
      EXPECT_EQ(x.grad()[0].select(1, 1).select(1, 2).abs().sum().item<double>(), 0);
    }
  }
}

TEST(Losses, AutocastLogitsAreTakenInFloat) {
  const auto x = twoPixelLogits(false).to(torch::kBFloat16);
  const auto y = twoPixelLabels(false);
  for (size_t k = 0; k < lossNames().size(); ++k) {
    const auto value = segmentationLoss(x, y, lossOf(LossKind(k)));
    EXPECT_EQ(value.scalar_type(), torch::kFloat) << lossNames()[k];
  }
}

}  // namespace
}  // namespace geodl
