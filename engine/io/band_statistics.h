// Per-band mean and standard deviation of pixels: the one implementation the samples job
// (over the training samples' valid pixels) and training (for stores without statistics)
// share.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace geodl::io {

class BandStatistics {
 public:
  explicit BandStatistics(int bands)
      : sum_(size_t(bands), 0.0), sum_sq_(size_t(bands), 0.0),
        min_(size_t(bands), std::numeric_limits<double>::infinity()),
        max_(size_t(bands), -std::numeric_limits<double>::infinity()) {}

  // One pixel: `bands` values, band-interleaved.
  template <class T>
  void add(const T* pixel) {
    for (size_t b = 0; b < sum_.size(); ++b) {
      const double v = double(pixel[b]);
      sum_[b] += v;
      sum_sq_[b] += v * v;
      if (v < min_[b]) min_[b] = v;
      if (v > max_[b]) max_[b] = v;
    }
    ++count_;
  }

  int64_t count() const { return count_; }
  // The means (0 without pixels).
  std::vector<double> mean() const;
  // The standard deviations, of a variance at least `min_variance` (0 without pixels).
  std::vector<double> stddev(double min_variance = 0) const;
  // The smallest and largest values of each band (empty without pixels): the value range
  // a model is trained on, which classification compares the imagery with.
  std::vector<double> minimum() const { return count_ > 0 ? min_ : std::vector<double>{}; }
  std::vector<double> maximum() const { return count_ > 0 ? max_ : std::vector<double>{}; }

 private:
  std::vector<double> sum_, sum_sq_, min_, max_;
  int64_t count_ = 0;
};

// The statistics of every pixel of the first `samples` samples of a store.
BandStatistics measureStoreStatistics(const std::string& store, int64_t samples);

}  // namespace geodl::io
