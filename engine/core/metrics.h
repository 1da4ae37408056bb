// Segmentation metrics from one confusion matrix: per-class IoU, precision, recall and F1,
// mean IoU and pixel accuracy (ignored pixels count nowhere).
#pragma once

#include <cstdint>
#include <vector>

namespace at {
class Tensor;
}

namespace geodl {

struct ClassMetrics {
  double iou = 0, precision = 0, recall = 0, f1 = 0;
  int64_t support = 0;  // pixels of this class in the truth
  bool present = false; // in the truth or the predictions
};

struct SegmentationMetrics {
  std::vector<ClassMetrics> per_class;
  double mean_iou = 0;        // over the classes present in truth or predictions
  double pixel_accuracy = 0;  // correct / counted pixels
  int64_t pixels = 0;         // counted pixels (ignored ones left out)
};

class ConfusionMatrix {
 public:
  // Labels equal to ignore_index (or outside [0, classes)) are not counted.
  explicit ConfusionMatrix(int classes, int64_t ignore_index = -100);

  // predictions and labels: int64 tensors of the same shape, on any device.
  void update(const at::Tensor& predictions, const at::Tensor& labels);
  // The same from plain arrays.
  void update(const int64_t* predictions, const int64_t* labels, size_t count);
  void reset();

  int classes() const { return classes_; }
  // Pixels of class `truth` predicted as `predicted`.
  int64_t at(int truth, int predicted) const { return counts_[size_t(truth) * classes_ + predicted]; }
  SegmentationMetrics metrics() const;
  // The counts, row by row (truth) and column (prediction): summed over ranks in
  // data-parallel validation.
  std::vector<int64_t>& counts() { return counts_; }

 private:
  int classes_;
  int64_t ignore_index_;
  std::vector<int64_t> counts_;  // row: truth, column: prediction
};

}  // namespace geodl
