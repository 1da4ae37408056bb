// Turning a stored sample into a network input: per-band normalization and the training
// augmentations (random rotation, horizontal and vertical flips). Standard library only.
#pragma once

#include <cstdint>
#include <random>

namespace geodl {

struct Augmentation {
  double rotate_limit = 0;  // degrees: the angle is uniform in [-limit, limit]
  double rotate_prob = 0;   // probability of rotating a sample
  double hflip_prob = 0;    // of mirroring left-right
  double vflip_prob = 0;    // of mirroring top-bottom
  bool active() const {
    return (rotate_prob > 0 && rotate_limit > 0) || hflip_prob > 0 || vflip_prob > 0;
  }
};

// One sample: `image` is size x size x bands (pixel-interleaved, as stored), `labels`
// size x size class ids (ignore_index where unknown). Writes the image band by band
// (bands x size x size), normalized as (value - mean) / std, and the labels as int64.
// Rotation resamples the image bilinearly and the labels by nearest neighbour; pixels the
// rotated sample does not cover get 0 (the mean) and ignore_index. The random draws come
// from `rng` in a fixed order, so a sample's augmentation depends only on the seed.
void prepareSample(const float* image, const uint8_t* labels, int size, int bands,
                   const double* mean, const double* std, const Augmentation& augmentation,
                   std::mt19937_64& rng, int ignore_index, float* out_image, int64_t* out_labels);

// The same with the transform given: flips, then a rotation by angle_degrees about the
// sample's centre (clockwise as displayed, rows running down).
void transformSample(const float* image, const uint8_t* labels, int size, int bands,
                     const double* mean, const double* std, double angle_degrees, bool hflip,
                     bool vflip, int ignore_index, float* out_image, int64_t* out_labels);

}  // namespace geodl
