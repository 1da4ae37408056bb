#include "core/tile_plan.h"

#include <algorithm>
#include <cmath>
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

std::vector<RowBand> splitRows(const TilePlan& plan, const std::vector<int64_t>& row_windows, int parts) {
  if (parts < 1) throw InputError("a plan is shared between at least one rank");
  const int blocks = int(plan.ys.size());
  std::vector<double> cost(size_t(blocks), 0.0);
  double total = 0;
  for (int k = 0; k < blocks; ++k) total += cost[size_t(k)] = k < int(row_windows.size()) ? double(row_windows[size_t(k)]) : 0.0;
  if (total == 0) {  // nothing to compute: rows of nodata, shared evenly
    std::fill(cost.begin(), cost.end(), 1.0);
    total = blocks;
  }
  std::vector<RowBand> bands(static_cast<size_t>(parts));
  int k = 0;
  double done = 0;
  for (int r = 0; r < parts; ++r) {
    RowBand& band = bands[size_t(r)];
    band.first_block = k;
    const double target = total * (r + 1) / parts;
    // A block goes to this band while the band's share, to the block's middle, is not full.
    while (k < blocks && (r == parts - 1 || done + cost[size_t(k)] / 2 < target)) done += cost[size_t(k++)];
    band.end_block = k;
    band.first_row = k > band.first_block ? firstContributingRow(plan, band.first_block) : band.first_block;
  }
  return bands;
}

}  // namespace geodl
