#include "core/metrics.h"

#include <torch/torch.h>

#include "base/errors.h"

namespace geodl {

ConfusionMatrix::ConfusionMatrix(int classes, int64_t ignore_index)
    : classes_(classes), ignore_index_(ignore_index), counts_(size_t(classes) * classes, 0) {
  if (classes < 1) throw InputError("a confusion matrix needs at least one class");
}

void ConfusionMatrix::reset() { std::fill(counts_.begin(), counts_.end(), 0); }

void ConfusionMatrix::update(const at::Tensor& predictions, const at::Tensor& labels) {
  TORCH_CHECK(predictions.sizes() == labels.sizes(), "predictions and labels differ in shape");
  torch::NoGradGuard no_grad;
  auto p = predictions.reshape({-1}).to(torch::kLong);
  auto l = labels.reshape({-1}).to(torch::kLong);
  auto valid = (l != ignore_index_) & (l >= 0) & (l < classes_) & (p >= 0) & (p < classes_);
  // One bincount on the device, then C x C numbers come back.
  auto index = (l.masked_select(valid) * classes_ + p.masked_select(valid));
  auto counts = torch::bincount(index, {}, int64_t(classes_) * classes_).to(torch::kCPU).to(torch::kLong);
  const int64_t* c = counts.data_ptr<int64_t>();
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += c[i];
}

void ConfusionMatrix::update(const int64_t* predictions, const int64_t* labels, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const int64_t l = labels[i], p = predictions[i];
    if (l == ignore_index_ || l < 0 || l >= classes_ || p < 0 || p >= classes_) continue;
    ++counts_[size_t(l) * classes_ + size_t(p)];
  }
}

SegmentationMetrics ConfusionMatrix::metrics() const {
  SegmentationMetrics m;
  m.per_class.resize(classes_);
  int64_t correct = 0;
  double iou_sum = 0;
  int present = 0;
  for (int k = 0; k < classes_; ++k) {
    int64_t tp = at(k, k), truth = 0, predicted = 0;
    for (int j = 0; j < classes_; ++j) {
      truth += at(k, j);
      predicted += at(j, k);
    }
    m.pixels += truth;
    correct += tp;
    auto& c = m.per_class[k];
    c.support = truth;
    c.present = truth > 0 || predicted > 0;
    const int64_t uni = truth + predicted - tp;
    c.iou = uni > 0 ? double(tp) / uni : 0.0;
    c.precision = predicted > 0 ? double(tp) / predicted : 0.0;
    c.recall = truth > 0 ? double(tp) / truth : 0.0;
    c.f1 = c.precision + c.recall > 0 ? 2 * c.precision * c.recall / (c.precision + c.recall) : 0.0;
    if (c.present) {
      iou_sum += c.iou;
      ++present;
    }
  }
  m.mean_iou = present > 0 ? iou_sum / present : 0.0;
  m.pixel_accuracy = m.pixels > 0 ? double(correct) / m.pixels : 0.0;
  return m;
}

}  // namespace geodl
