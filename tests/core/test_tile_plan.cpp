// Window plans and blend weights: exact coverage on awkward sizes.
#include <gtest/gtest.h>

#include <vector>

#include "base/errors.h"
#include "core/tile_plan.h"

namespace geodl {
namespace {

// How many windows of the plan cover each pixel.
std::vector<int> coverage(const TilePlan& p) {
  std::vector<int> count(size_t(p.width) * p.height, 0);
  for (int y0 : p.ys)
    for (int x0 : p.xs)
      for (int y = std::max(0, y0); y < std::min(p.height, y0 + p.window); ++y)
        for (int x = std::max(0, x0); x < std::min(p.width, x0 + p.window); ++x)
          ++count[size_t(y) * p.width + x];
  return count;
}

TEST(TilePlan, GeoDeepLearningOverlapAndEdgeWindows) {
  const TilePlan p = planTiles(1000, 700, 256, overlapPixels(256, 25));  // overlap 64 px, stride 192
  EXPECT_EQ(p.overlap, 64);
  EXPECT_EQ(p.xs, (std::vector<int>{0, 192, 384, 576, 744}));  // the last ends at the edge
  EXPECT_EQ(p.ys, (std::vector<int>{0, 192, 384, 444}));
  for (int c : coverage(p)) EXPECT_GE(c, 1);
}

// The overlap blending needs, in pixels, whatever the window; and what it costs.
TEST(TilePlan, AutomaticOverlapInPixelsAndTheComputedPixels) {
  EXPECT_EQ(automaticOverlap(256, 1024), 64);  // a quarter of the sample size
  EXPECT_EQ(automaticOverlap(256, 512), 64);
  EXPECT_EQ(automaticOverlap(256, 128), 32);   // at most a quarter of the window
  EXPECT_EQ(automaticOverlap(32, 1024), 32);   // at least 32 px
  const TilePlan big = planTiles(1920, 1920, 1024, 64);
  EXPECT_EQ(big.overlap, 64);
  EXPECT_EQ(big.xs, (std::vector<int>{0, 896}));
  for (int c : coverage(big)) EXPECT_GE(c, 1);
  // 4 windows of 1024^2 for 1920^2 pixels; 256 px windows at 25% compute (256/192)^2 = 1.78x.
  EXPECT_NEAR(computedPerOutputPixel(big, big.windows(), 1920 * 1920), 4.0 * 1024 * 1024 / (1920.0 * 1920), 1e-12);
  const TilePlan small = planTiles(1920, 1920, 256, overlapPixels(256, 25));
  EXPECT_EQ(small.windows(), 100);
  EXPECT_NEAR(computedPerOutputPixel(small, small.windows(), 1920 * 1920), 1.78, 0.01);
  EXPECT_THROW(planTiles(100, 100, 64, 32), InputError);
  EXPECT_THROW(planTiles(100, 100, 64, -1), InputError);
}

// A GeoTIFF output's tiles are as high as a multiple of 16 dividing the step between window
// rows, so that the blocks of rows (all but the last two) hold whole rows of tiles.
TEST(TilePlan, TileRowsDivideTheBlocks) {
  const auto rows = [](int window, int overlap) { return blockAlignedTileRows(planTiles(5000, 5000, window, overlap)); };
  EXPECT_EQ(rows(256, 64), 192);   // the step itself
  EXPECT_EQ(rows(512, 128), 192);  // 384: half of it, nearer 256
  EXPECT_EQ(rows(512, 64), 224);   // 448
  EXPECT_EQ(rows(1024, 64), 240);  // 960
  EXPECT_EQ(rows(288, 16), 272);   // 17 x 16: the step itself, not tiles of 16 rows
  EXPECT_EQ(rows(300, 30), 256);   // 270: no multiple of 16 divides it
  EXPECT_EQ(rows(64, 8), 256);     // 56: none from 64 up
  for (int window : {128, 256, 384, 512, 1024, 2048})
    for (int overlap : {16, 32, 48, 64, 96}) {
      if (window <= 2 * overlap) continue;
      const TilePlan p = planTiles(40000, 40000, window, overlap);
      const int t = blockAlignedTileRows(p), step = window - overlap;
      bool divisible = false;  // by a multiple of 16 from 64 to 512 (2032 = 16 x 127 is not)
      for (int r = 64; r <= 512; r += 16) divisible = divisible || step % r == 0;
      if (!divisible) {
        EXPECT_EQ(t, 256) << step;
        continue;
      }
      ASSERT_EQ(t % 16, 0);
      ASSERT_GE(t, 64);
      ASSERT_LE(t, 512);
      for (size_t k = 0; k + 2 < p.ys.size(); ++k) ASSERT_EQ(p.ys[k] % t, 0) << window << " " << overlap;
    }
}

TEST(TilePlan, EveryPixelCoveredForAwkwardSizes) {
  for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {1, 500}, {257, 255}, {256, 256},
                                                      {100, 3}, {513, 1025}, {600, 1}}) {
    const TilePlan p = planTiles(w, h, 256, overlapPixels(256, 10));
    for (int c : coverage(p)) ASSERT_GE(c, 1) << w << "x" << h;
    for (int x : p.xs) EXPECT_TRUE(x == 0 || x + 256 <= w);
    if (w <= 256) EXPECT_EQ(p.xs, (std::vector<int>{0}));  // smaller than a window: one
  }
}

TEST(TilePlan, RefusesAWindowNotLargerThanTwiceTheOverlap) {
  EXPECT_THROW(planTiles(100, 100, 64, overlapPixels(64, 50)), InputError);
  EXPECT_THROW(planTiles(0, 100, 64, overlapPixels(64, 10)), InputError);
  EXPECT_NO_THROW(planTiles(100, 100, 64, overlapPixels(64, 49)));
}

TEST(TilePlan, BlendWeightsRiseSmoothlyAndNeverVanish) {
  const int n = 32, overlap = 8;
  const auto w = blendWeights(n, overlap);
  const auto at = [&](int x, int y) { return w[size_t(y) * n + x]; };
  EXPECT_FLOAT_EQ(at(16, 16), 1.0f);
  EXPECT_GT(at(0, 0), 0.0f);
  EXPECT_FLOAT_EQ(at(1, 16), 1e-3f);  // the outer quarter of the overlap: the padding's pixels
  for (int x = 2; x + 2 < overlap; ++x) EXPECT_LT(at(x, 16), at(x + 1, 16));  // rising
  EXPECT_FLOAT_EQ(at(overlap - 1, 16), 1.0f);
  for (int x = 0; x < n; ++x) EXPECT_FLOAT_EQ(at(x, 8), at(n - 1 - x, 8));  // symmetric
  // Across the overlap of two neighbours the weights sum to about one: no dip, no bump.
  for (int i = 0; i < overlap; ++i)
    EXPECT_NEAR(at(n - overlap + i, 16) + at(i, 16), 1.0f, 1.01e-3) << i;
  const auto none = blendWeights(8, 0);
  for (float v : none) EXPECT_FLOAT_EQ(v, 1.0f);
}

// Bands of rows for ranks: contiguous, covering every block once, each computing the rows
// whose windows reach its first block, balanced by the windows computed.
TEST(TilePlan, RowBandsCoverEveryBlockOnceAndBalanceTheWindows) {
  const TilePlan p = planTiles(230, 1000, 64, overlapPixels(64, 25));  // stride 48: 21 rows of windows
  const int rows = int(p.ys.size());
  ASSERT_EQ(rows, 21);
  std::vector<int64_t> windows(size_t(rows), int64_t(p.xs.size()));
  for (int parts : {1, 2, 3, 5, 21, 30}) {
    const auto bands = splitRows(p, windows, parts);
    ASSERT_EQ(int(bands.size()), parts);
    int next = 0;
    int64_t most = 0;
    for (const RowBand& b : bands) {
      EXPECT_EQ(b.first_block, next);
      next = b.end(p);
      if (b.empty(p)) continue;
      // The rows before the first block whose windows reach it, and no more.
      EXPECT_LE(b.first_row, b.first_block);
      if (b.first_row > 0) EXPECT_LE(p.ys[size_t(b.first_row - 1)] + p.window, p.ys[size_t(b.first_block)]);
      for (int k = b.first_row; k < b.first_block; ++k) EXPECT_GT(p.ys[size_t(k)] + p.window, p.ys[size_t(b.first_block)]);
      most = std::max<int64_t>(most, b.end(p) - b.first_block);
    }
    EXPECT_EQ(next, rows);
    EXPECT_EQ(bands.front().y0(p), 0);
    EXPECT_EQ(bands.back().y1(p), 1000);
    EXPECT_LE(most, (rows + parts - 1) / parts + 1) << parts << " parts";
  }
  // An extent or a mask leaves rows without windows: they cost nothing, and the rows that
  // have windows are split evenly, counting the row rank 1 computes again (25 + 5 against
  // 5 + 25 windows: either cut is as good).
  std::vector<int64_t> masked(size_t(rows), 0);
  for (int k = 10; k < 20; ++k) masked[size_t(k)] = 5;
  const auto bands = splitRows(p, masked, 2);
  EXPECT_EQ(bands[0].end(p), 16);
  EXPECT_EQ(bands[0].y1(p), bands[1].y0(p));
  // Nothing computed at all: rows shared evenly.
  const auto none = splitRows(p, std::vector<int64_t>(size_t(rows), 0), 3);
  EXPECT_EQ(none[0].end(p), 7);
  EXPECT_EQ(none[1].end(p), 14);
  EXPECT_THROW(splitRows(p, windows, 0), InputError);
}

// The windows a rank computes for its band, as classify runs it: each run of blocks left in
// the band, from the rows above its first block (none after a finished block whose carry is
// kept) to its end.
int64_t bandWindows(const TilePlan& p, const RowBand& band, const std::vector<int64_t>& windows,
                    const std::vector<bool>& done, const std::vector<bool>& carried) {
  int64_t sum = 0;
  for (int k = band.first_block, end = band.end(p); k < end;) {
    if (done[size_t(k)]) {
      ++k;
      continue;
    }
    const int first = k;
    while (k < end && !done[size_t(k)]) ++k;
    const bool after_carry = first > 0 && done[size_t(first) - 1] && carried[size_t(first) - 1];
    for (int r = after_carry ? first : firstContributingRow(p, first); r < k; ++r) sum += windows[size_t(r)];
  }
  return sum;
}

// The busiest rank's windows against the best of every way to cut the rows in 2 or 3 bands:
// the rows a band computes again above its first block count, so that 21 rows of equal cost
// go 11 + (1 + 10) to 2 ranks rather than 10 + (1 + 11); a stopped run's finished blocks cost
// nothing, and a run after one costs its row above unless the carry is kept.
TEST(TilePlan, RowBandsLeaveTheBusiestRankTheLeastWindows) {
  const TilePlan p = planTiles(230, 1000, 64, overlapPixels(64, 25));  // 21 rows, 1 row above each
  const int rows = int(p.ys.size());
  std::vector<int64_t> windows(size_t(rows), int64_t(p.xs.size()));
  windows[3] = 1;  // some rows cost less (an extent or a mask)
  windows[17] = 2;
  const auto busiest = [&](const std::vector<RowBand>& bands, const std::vector<bool>& done,
                           const std::vector<bool>& carried) {
    int64_t most = 0;
    for (const RowBand& b : bands) most = std::max(most, bandWindows(p, b, windows, done, carried));
    return most;
  };
  const auto band = [](int first, int end) {
    RowBand b;
    b.first_block = first;
    b.end_block = end;
    return b;
  };
  const auto best = [&](int parts, const std::vector<bool>& done, const std::vector<bool>& carried) {
    int64_t least = INT64_MAX;
    for (int a = 0; a <= rows; ++a)
      for (int c = parts == 3 ? a : rows; c <= rows; ++c)
        least = std::min(least, busiest({band(0, a), band(a, c), band(c, rows)}, done, carried));
    return least;
  };
  const std::vector<bool> none(size_t(rows), false);
  // The stopped runs: blocks 0-9 finished, with and without the carry after block 9; blocks
  // 0-5 and 10-15 finished, the carry kept after 5 only (the one after 15 damaged after the stop).
  std::vector<bool> first_half(size_t(rows), false), two_runs(size_t(rows), false);
  for (int k = 0; k < 10; ++k) first_half[size_t(k)] = true;
  for (int k : {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}) two_runs[size_t(k)] = true;
  std::vector<bool> carry9(size_t(rows), false), carry5(size_t(rows), false);
  carry9[9] = true;
  carry5[5] = true;
  const std::vector<std::pair<std::vector<bool>, std::vector<bool>>> runs = {
      {none, none}, {first_half, carry9}, {first_half, none}, {two_runs, carry5}};
  for (const auto& [done, carried] : runs)
    for (int parts : {2, 3}) {
      const auto bands = splitRows(p, windows, parts, done, carried);
      ASSERT_EQ(int(bands.size()), parts);
      EXPECT_EQ(bands.back().end(p), rows);
      EXPECT_EQ(busiest(bands, done, carried), best(parts, done, carried)) << parts << " parts";
    }
  // Without a stopped run, 2 bands: rows 0-10 (51 windows) and rows 10-20 (52), where
  // cutting after row 9 gave 46 and 57.
  const auto even = splitRows(p, windows, 2);
  EXPECT_EQ(even[0].end(p), 11);
  EXPECT_EQ(busiest(even, none, none), 52);
}

}  // namespace
}  // namespace geodl
