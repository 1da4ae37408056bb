#include "core/tile_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "base/errors.h"

namespace geodl {

namespace {

std::vector<int> origins(int size, int window, int stride) {
  std::vector<int> out;
  if (size <= window) return {0};
  for (int x = 0;; x += stride) {
    if (x + window >= size) {
      out.push_back(size - window);
      break;
    }
    out.push_back(x);
  }
  return out;
}

}  // namespace

int blockAlignedTileRows(const TilePlan& plan) {
  const int step = plan.window - plan.overlap;
  int best = 0;
  for (int rows = 64; rows <= 512; rows += 16)
    if (step % rows == 0 && (best == 0 || std::abs(rows - 256) < std::abs(best - 256))) best = rows;
  return best ? best : 256;
}

int overlapPixels(int window, double percent) { return int(std::lround(window * percent / 100.0)); }

TilePlan planTiles(int width, int height, int window, int overlap) {
  if (width < 1 || height < 1)
    throw InputError("the raster has no pixels (" + std::to_string(width) + " x " +
                     std::to_string(height) + ")");
  if (window < 1) throw InputError("the window size must be at least 1 pixel");
  if (overlap < 0) throw InputError("the overlap cannot be negative");
  TilePlan plan;
  plan.width = width;
  plan.height = height;
  plan.window = window;
  plan.overlap = overlap;
  if (window <= 2 * plan.overlap)
    throw InputError("a window of " + std::to_string(window) + " pixels is not larger than twice "
                     "the overlap (" + std::to_string(plan.overlap) + " pixels): lower the "
                     "overlap below 50% or use a larger window");
  const int stride = window - plan.overlap;
  plan.xs = origins(width, window, stride);
  plan.ys = origins(height, window, stride);
  return plan;
}

int automaticOverlap(int sample_size, int window) {
  return std::min(std::max(32, sample_size / 4), window / 4);
}

double computedPerOutputPixel(const TilePlan& plan, int64_t computed, int64_t area_pixels) {
  return area_pixels > 0 ? double(computed) * plan.window * plan.window / double(area_pixels) : 0.0;
}

std::vector<float> blendWeights(int window, int overlap) {
  std::vector<float> ramp(size_t(window), 1.0f);
  constexpr float kFloor = 1e-3f;  // never 0: a pixel seen by one window keeps its value
  // The outer quarter of the overlap keeps the floor: those pixels saw the padding at the
  // window's edge, which its neighbour covers with real context.
  const int margin = overlap / 4, rise = overlap - 2 * margin;
  for (int i = 0; i < overlap && i < window; ++i) {
    const double t = std::clamp((i + 0.5 - margin) / rise, 0.0, 1.0);
    const float w = std::max(kFloor, float(0.5 - 0.5 * std::cos(M_PI * t)));
    ramp[size_t(i)] = std::min(ramp[size_t(i)], w);
    ramp[size_t(window - 1 - i)] = std::min(ramp[size_t(window - 1 - i)], w);
  }
  std::vector<float> weights(size_t(window) * window);
  for (int y = 0; y < window; ++y)
    for (int x = 0; x < window; ++x) weights[size_t(y) * window + x] = ramp[size_t(y)] * ramp[size_t(x)];
  return weights;
}

int RowBand::y0(const TilePlan& plan) const {
  return first_block < int(plan.ys.size()) ? plan.ys[size_t(first_block)] : plan.height;
}

int RowBand::y1(const TilePlan& plan) const {
  const int e = end(plan);
  return e < int(plan.ys.size()) ? plan.ys[size_t(e)] : plan.height;
}

int firstContributingRow(const TilePlan& plan, int block) {
  int row = block;
  while (row > 0 && plan.ys[size_t(row - 1)] + plan.window > plan.ys[size_t(block)]) --row;
  return row;
}

std::vector<RowBand> splitRows(const TilePlan& plan, const std::vector<int64_t>& row_windows, int parts,
                               const std::vector<bool>& done, const std::vector<bool>& carried) {
  if (parts < 1) throw InputError("a plan is shared between at least one rank");
  const int blocks = int(plan.ys.size());
  const auto windows = [&](int k) { return k < int(row_windows.size()) ? row_windows[size_t(k)] : int64_t(0); };
  const auto finished = [&](int k) { return k >= 0 && k < int(done.size()) && done[size_t(k)]; };
  const auto kept = [&](int k) { return k < int(carried.size()) && carried[size_t(k)]; };
  // above[k]: the windows of the rows above block k that reach it, computed again by a run of
  // blocks starting at k without a carry.
  std::vector<int64_t> own(size_t(blocks), 0), above(size_t(blocks), 0);
  int64_t total = 0;
  for (int k = 0; k < blocks; ++k) {
    for (int r = firstContributingRow(plan, k); r < k; ++r) above[size_t(k)] += windows(r);
    if (finished(k)) continue;
    own[size_t(k)] = windows(k);
    // A run after a finished block: its rows above, unless the carry is kept (wherever the
    // bands are cut).
    if (finished(k - 1) && !kept(k - 1)) own[size_t(k)] += above[size_t(k)];
    total += own[size_t(k)];
  }
  if (total == 0) {  // nothing to compute: rows of nodata, shared evenly
    std::fill(own.begin(), own.end(), 1);
    std::fill(above.begin(), above.end(), 0);
    total = blocks;
  }
  // A band cut at k inside a run of blocks left computes k's rows above again.
  const auto cut = [&](int k) { return k > 0 && !finished(k) && !finished(k - 1) ? above[size_t(k)] : int64_t(0); };
  // The bands, each filled while its windows stay within `most`; end == blocks when they fit.
  const auto fill = [&](int64_t most) {
    std::vector<RowBand> bands(static_cast<size_t>(parts));
    int k = 0;
    for (RowBand& band : bands) {
      band.first_block = k;
      for (int64_t cost = 0; k < blocks; ++k) {
        const int64_t step = own[size_t(k)] + (k == band.first_block ? cut(k) : 0);
        if (cost + step > most) break;
        cost += step;
      }
      band.end_block = k;
      band.first_row = k > band.first_block ? firstContributingRow(plan, band.first_block) : band.first_block;
    }
    return bands;
  };
  int64_t low = 0, high = total;
  for (int k = 0; k < blocks; ++k) high += cut(k);
  while (low < high) {  // the least `most` with which every block fits
    const int64_t mid = low + (high - low) / 2;
    if (fill(mid).back().end(plan) == blocks) high = mid;
    else low = mid + 1;
  }
  return fill(low);
}

}  // namespace geodl
