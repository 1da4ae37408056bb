// Normalization and augmentation of samples: exact results on small generated samples.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

#include "core/augment.h"

namespace geodl {
namespace {

struct Sample {
  int size, bands;
  std::vector<float> image;     // size x size x bands
  std::vector<uint8_t> labels;  // size x size
};

// Pixel (x, y) of band b holds 100*b + y*size + x; its label is (y*size + x) % 7.
Sample numbered(int size, int bands) {
  Sample s{size, bands, {}, {}};
  for (int y = 0; y < size; ++y)
    for (int x = 0; x < size; ++x) {
      for (int b = 0; b < bands; ++b) s.image.push_back(float(100 * b + y * size + x));
      s.labels.push_back(uint8_t((y * size + x) % 7));
    }
  return s;
}

struct Output {
  std::vector<float> image;
  std::vector<int64_t> labels;
};

Output transform(const Sample& s, const std::vector<double>& mean, const std::vector<double>& std,
                 double angle, bool hflip, bool vflip) {
  Output o{std::vector<float>(s.image.size()), std::vector<int64_t>(s.labels.size())};
  transformSample(s.image.data(), s.labels.data(), s.size, s.bands, mean.data(), std.data(), angle,
                  hflip, vflip, 255, o.image.data(), o.labels.data());
  return o;
}

TEST(Augment, NormalizesPerBandAndWritesBandsAsPlanes) {
  const Sample s = numbered(3, 2);
  const Output o = transform(s, {1.0, 100.0}, {2.0, 4.0}, 0, false, false);
  for (int p = 0; p < 9; ++p) {
    EXPECT_FLOAT_EQ(o.image[p], (p - 1.0f) / 2.0f);
    EXPECT_FLOAT_EQ(o.image[9 + p], (100.0f + p - 100.0f) / 4.0f);
    EXPECT_EQ(o.labels[p], p % 7);
  }
}

TEST(Augment, FlipsMirrorImageAndLabelsTogether) {
  const Sample s = numbered(4, 1);
  const Output h = transform(s, {0.0}, {1.0}, 0, true, false);
  const Output v = transform(s, {0.0}, {1.0}, 0, false, true);
  const Output hv = transform(s, {0.0}, {1.0}, 0, true, true);
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) {
      const int p = y * 4 + x;
      EXPECT_EQ(h.image[p], float(y * 4 + (3 - x)));
      EXPECT_EQ(h.labels[p], (y * 4 + (3 - x)) % 7);
      EXPECT_EQ(v.image[p], float((3 - y) * 4 + x));
      EXPECT_EQ(v.labels[p], ((3 - y) * 4 + x) % 7);
      EXPECT_EQ(hv.image[p], float((3 - y) * 4 + (3 - x)));
    }
}

TEST(Augment, QuarterTurnIsAnExactRotationClockwise) {
  const Sample s = numbered(5, 1);
  const Output o = transform(s, {0.0}, {1.0}, 90, false, false);
  // Clockwise: the output's pixel (x, y) comes from the source's (y, size-1-x).
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 5; ++x) {
      const int src = (4 - x) * 5 + y;
      EXPECT_NEAR(o.image[y * 5 + x], float(src), 1e-4) << x << "," << y;
      EXPECT_EQ(o.labels[y * 5 + x], src % 7) << x << "," << y;
    }
}

TEST(Augment, RotationLeavesUncoveredCornersIgnoredAndInterpolatesInside) {
  const int size = 32;
  Sample s{size, 1, std::vector<float>(size * size, 10.0f), std::vector<uint8_t>(size * size, 3)};
  const Output o = transform(s, {4.0}, {2.0}, 45, false, false);
  // Corners are outside the rotated square: ignored labels, image at the mean (0).
  for (int p : {0, size - 1, size * (size - 1), size * size - 1}) {
    EXPECT_EQ(o.labels[p], 255);
    EXPECT_EQ(o.image[p], 0.0f);
  }
  // The centre is covered: the normalized constant (10 - 4) / 2 = 3 and the label stay.
  const int centre = (size / 2) * size + size / 2;
  EXPECT_NEAR(o.image[centre], 3.0f, 1e-5);
  EXPECT_EQ(o.labels[centre], 3);
  // Nearest neighbour never invents a label.
  for (int64_t l : o.labels) EXPECT_TRUE(l == 3 || l == 255);
}

TEST(Augment, DrawsDependOnlyOnTheGeneratorAndRespectProbabilities) {
  const Sample s = numbered(8, 2);
  Augmentation always;
  always.hflip_prob = 1;
  std::mt19937_64 rng(1);
  Output a{std::vector<float>(s.image.size()), std::vector<int64_t>(64)};
  prepareSample(s.image.data(), s.labels.data(), 8, 2, std::vector<double>{0, 0}.data(),
                std::vector<double>{1, 1}.data(), always, rng, 255, a.image.data(), a.labels.data());
  const Output h = transform(s, {0, 0}, {1, 1}, 0, true, false);
  EXPECT_EQ(a.image, h.image);
  EXPECT_EQ(a.labels, h.labels);

  // Same seed, same result; probabilities of 0 leave the sample as it is.
  Augmentation mixed;
  mixed.rotate_limit = 30;
  mixed.rotate_prob = 0.5;
  mixed.vflip_prob = 0.5;
  std::set<std::vector<float>> distinct;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    Output x{std::vector<float>(s.image.size()), std::vector<int64_t>(64)};
    Output y = x;
    std::mt19937_64 r1(seed), r2(seed);
    const std::vector<double> m{0, 0}, d{1, 1};
    prepareSample(s.image.data(), s.labels.data(), 8, 2, m.data(), d.data(), mixed, r1, 255,
                  x.image.data(), x.labels.data());
    prepareSample(s.image.data(), s.labels.data(), 8, 2, m.data(), d.data(), mixed, r2, 255,
                  y.image.data(), y.labels.data());
    EXPECT_EQ(x.image, y.image);
    distinct.insert(x.image);
  }
  EXPECT_GT(distinct.size(), 3u);  // rotations and flips do happen
  Augmentation none;
  std::mt19937_64 r(5);
  Output n{std::vector<float>(s.image.size()), std::vector<int64_t>(64)};
  prepareSample(s.image.data(), s.labels.data(), 8, 2, std::vector<double>{0, 0}.data(),
                std::vector<double>{1, 1}.data(), none, r, 255, n.image.data(), n.labels.data());
  EXPECT_EQ(n.image, transform(s, {0, 0}, {1, 1}, 0, false, false).image);
}

}  // namespace
}  // namespace geodl
