#include "io/band_statistics.h"

#include <algorithm>
#include <cmath>

#include "io/sample_store.h"

namespace geodl::io {

std::vector<double> BandStatistics::mean() const {
  std::vector<double> m(sum_.size(), 0.0);
  if (count_ > 0)
    for (size_t b = 0; b < m.size(); ++b) m[b] = sum_[b] / double(count_);
  return m;
}

std::vector<double> BandStatistics::stddev(double min_variance) const {
  std::vector<double> s(sum_.size(), 0.0);
  if (count_ == 0) return s;
  const auto m = mean();
  for (size_t b = 0; b < s.size(); ++b)
    s[b] = std::sqrt(std::max(min_variance, sum_sq_[b] / double(count_) - m[b] * m[b]));
  return s;
}

BandStatistics measureStoreStatistics(const std::string& store, int64_t samples) {
  SampleStoreReader reader(store);
  const size_t bands = size_t(reader.bands()), pixels = size_t(reader.sampleSize()) * reader.sampleSize();
  BandStatistics stats(reader.bands());
  std::vector<float> image(pixels * bands);
  std::vector<uint8_t> labels(pixels);
  for (int64_t i = 0; i < samples; ++i) {
    reader.read(i, image.data(), labels.data());
    for (size_t p = 0; p < pixels; ++p) stats.add(image.data() + p * bands);
  }
  return stats;
}

}  // namespace geodl::io
