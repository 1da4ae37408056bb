// Metrics against confusion matrices computed by hand.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "core/metrics.h"

namespace geodl {
namespace {

TEST(Metrics, ConfusionMatrixAndScoresMatchAHandComputation) {
  // truth:      0 0 0 1 1 2 2 2 255
  // prediction: 0 0 1 1 2 2 2 0 1
  const std::vector<int64_t> truth = {0, 0, 0, 1, 1, 2, 2, 2, 255};
  const std::vector<int64_t> pred = {0, 0, 1, 1, 2, 2, 2, 0, 1};
  ConfusionMatrix cm(3, 255);
  cm.update(torch::tensor(pred).reshape({3, 3}), torch::tensor(truth).reshape({3, 3}));
  // Rows truth, columns prediction; the ignored pixel counts nowhere.
  const int64_t expected[3][3] = {{2, 1, 0}, {0, 1, 1}, {1, 0, 2}};
  for (int t = 0; t < 3; ++t)
    for (int p = 0; p < 3; ++p) EXPECT_EQ(cm.at(t, p), expected[t][p]) << t << "," << p;
  const auto m = cm.metrics();
  EXPECT_EQ(m.pixels, 8);
  EXPECT_DOUBLE_EQ(m.pixel_accuracy, 5.0 / 8.0);
  // Class 0: tp 2, truth 3, predicted 3: IoU 2/4, precision 2/3, recall 2/3.
  EXPECT_DOUBLE_EQ(m.per_class[0].iou, 0.5);
  EXPECT_DOUBLE_EQ(m.per_class[0].precision, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.per_class[0].recall, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.per_class[0].f1, 2.0 / 3.0);
  // Class 1: tp 1, truth 2, predicted 2: IoU 1/3, precision 1/2, recall 1/2.
  EXPECT_DOUBLE_EQ(m.per_class[1].iou, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.per_class[1].f1, 0.5);
  // Class 2: tp 2, truth 3, predicted 3: IoU 2/4.
  EXPECT_DOUBLE_EQ(m.per_class[2].iou, 0.5);
  EXPECT_DOUBLE_EQ(m.mean_iou, (0.5 + 1.0 / 3.0 + 0.5) / 3.0);
  // Real IoU, not pixel accuracy under another name.
  EXPECT_NE(m.mean_iou, m.pixel_accuracy);
}

TEST(Metrics, ArraysAndTensorsAgreeAndAbsentClassesDoNotCountInTheMean) {
  const std::vector<int64_t> truth = {0, 0, 1, 1};
  const std::vector<int64_t> pred = {0, 1, 1, 1};
  ConfusionMatrix a(4), b(4);
  a.update(pred.data(), truth.data(), truth.size());
  b.update(torch::tensor(pred), torch::tensor(truth));
  for (int t = 0; t < 4; ++t)
    for (int p = 0; p < 4; ++p) EXPECT_EQ(a.at(t, p), b.at(t, p));
  const auto m = a.metrics();
  EXPECT_FALSE(m.per_class[2].present);
  EXPECT_FALSE(m.per_class[3].present);
  EXPECT_DOUBLE_EQ(m.mean_iou, (0.5 + 2.0 / 3.0) / 2.0);
  a.reset();
  EXPECT_EQ(a.metrics().pixels, 0);
}

}  // namespace
}  // namespace geodl
