// How inputs are normalized, in training and classification alike: (value - mean) / std per
// band, computed in float as value * scale + offset. A band whose std is 0 is only centred.
// Standard library only.
#pragma once

#include <vector>

namespace geodl {

class BandNormalization {
 public:
  BandNormalization(const double* mean, const double* stddev, int bands) : scale_(size_t(bands)), offset_(size_t(bands)) {
    for (int b = 0; b < bands; ++b) {
      const double s = stddev[b] > 0 ? stddev[b] : 1.0;
      scale_[size_t(b)] = float(1.0 / s);
      offset_[size_t(b)] = float(-mean[b] / s);
    }
  }
  BandNormalization(const std::vector<double>& mean, const std::vector<double>& stddev)
      : BandNormalization(mean.data(), stddev.data(), int(mean.size())) {}

  float operator()(float value, int band) const { return value * scale_[size_t(band)] + offset_[size_t(band)]; }

 private:
  std::vector<float> scale_, offset_;
};

}  // namespace geodl
