#include "core/augment.h"

#include <cmath>
#include <vector>

#include "base/normalization.h"

namespace geodl {

void prepareSample(const float* image, const uint8_t* labels, int size, int bands,
                   const double* mean, const double* std, const Augmentation& a,
                   std::mt19937_64& rng, int ignore_index, float* out_image, int64_t* out_labels) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  // Always four draws, so that one sample's choices never shift another's.
  const double u_rotate = unit(rng), u_angle = unit(rng), u_h = unit(rng), u_v = unit(rng);
  const bool rotate = a.rotate_limit > 0 && u_rotate < a.rotate_prob;
  const bool hflip = u_h < a.hflip_prob, vflip = u_v < a.vflip_prob;
  transformSample(image, labels, size, bands, mean, std,
                  rotate ? (2 * u_angle - 1) * a.rotate_limit : 0.0, hflip, vflip, ignore_index,
                  out_image, out_labels);
}

void transformSample(const float* image, const uint8_t* labels, int size, int bands,
                     const double* mean, const double* std, double angle_degrees, bool hflip,
                     bool vflip, int ignore_index, float* out_image, int64_t* out_labels) {
  const bool rotate = angle_degrees != 0.0;
  const double angle = angle_degrees * M_PI / 180.0;

  const size_t plane = size_t(size) * size;
  const BandNormalization normalize(mean, std, bands);
  // Output pixel (x, y) reads source (sx, sy): flips first, then the rotation about the
  // centre (both are applied to the output grid, i.e. the inverse mapping).
  const double c = (size - 1) / 2.0, cos_a = std::cos(angle), sin_a = std::sin(angle);
  for (int y = 0; y < size; ++y) {
    for (int x = 0; x < size; ++x) {
      const int fx = hflip ? size - 1 - x : x, fy = vflip ? size - 1 - y : y;
      const size_t out = size_t(y) * size + x;
      if (!rotate) {
        const size_t in = size_t(fy) * size + fx;
        for (int b = 0; b < bands; ++b)
          out_image[b * plane + out] = normalize(image[in * bands + b], b);
        out_labels[out] = labels[in];
        continue;
      }
      const double dx = fx - c, dy = fy - c;
      const double sx = cos_a * dx + sin_a * dy + c, sy = -sin_a * dx + cos_a * dy + c;
      // Labels: nearest neighbour.
      const long nx = std::lround(sx), ny = std::lround(sy);
      out_labels[out] = (nx >= 0 && ny >= 0 && nx < size && ny < size)
                            ? labels[size_t(ny) * size + size_t(nx)]
                            : ignore_index;
      // Image: bilinear over the normalized values; outside is 0 (the band mean).
      const double x0f = std::floor(sx), y0f = std::floor(sy);
      const int x0 = int(x0f), y0 = int(y0f);
      const double wx = sx - x0f, wy = sy - y0f;
      for (int b = 0; b < bands; ++b) {
        double v = 0;
        for (int k = 0; k < 4; ++k) {
          const int xi = x0 + (k & 1), yi = y0 + (k >> 1);
          if (xi < 0 || yi < 0 || xi >= size || yi >= size) continue;
          const double w = ((k & 1) ? wx : 1 - wx) * ((k >> 1) ? wy : 1 - wy);
          v += w * normalize(image[(size_t(yi) * size + xi) * bands + b], b);
        }
        out_image[b * plane + out] = float(v);
      }
    }
  }
}

}  // namespace geodl
