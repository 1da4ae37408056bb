// Sliding windows over a raster for classification, and the weights that blend them:
// every pixel is covered (right and bottom edges included, rasters smaller than a window
// too), and overlapping predictions fade into each other instead of meeting at a seam.
// Standard library only.
#pragma once

#include <cstdint>
#include <vector>

namespace geodl {

struct TilePlan {
  int width = 0, height = 0;  // the raster
  int window = 0;             // windows are window x window pixels
  int overlap = 0;            // pixels shared by neighbouring windows
  std::vector<int> xs, ys;    // window origins; a window may reach past a raster smaller than it
  int windows() const { return int(xs.size() * ys.size()); }
};

// Windows every (window - overlap) pixels, the last column and row moved back to end at the
// raster's edge; one window along a side shorter than the window. Throws InputError when the
// window is not larger than twice the overlap (a rule joining the two: each alone is bounded
// by the option tables), or a size is not positive.
TilePlan planTiles(int width, int height, int window, int overlap);

// geo-deep-learning's `overlap`, a percentage of the window (its range is the option
// table's), in pixels: 64 for 25% of 256.
int overlapPixels(int window, double percent);

// The overlap blending needs when none is given: a quarter of the model's sample size (the
// context its training windows had at their edges), at least 32 pixels, and at most a
// quarter of the window, e.g. 64 px for 256 px samples at any window of 256 px or more.
int automaticOverlap(int sample_size, int window);

// Pixels computed (the windows at `computed` of the plan) per pixel of `area_pixels`:
// 1.78 for 256 px windows overlapping by 25%, 1.14 for 1024 px ones overlapping by 64 px.
double computedPerOutputPixel(const TilePlan& plan, int64_t computed, int64_t area_pixels);

// The height of a GeoTIFF output's tiles for the plan: the multiple of 16 from 64 to 512 nearest
// 256 that divides the step between window rows (window - overlap), so that every block of rows
// but the last two holds whole rows of tiles and a block's file holds the output's tiles (192
// for 256 px windows overlapping by 64); 256 where none divides the step.
int blockAlignedTileRows(const TilePlan& plan);

// A plan's rows shared between processes. Output block k is rows [ys[k], ys[k + 1]) (the
// last up to the height): final once the windows of row k are blended in, and made of the
// windows of rows first..k that reach it. A band writes blocks [first_block, end_block) and
// computes the window rows [first_row, end_block): the rows before its first block are
// computed again (its neighbour computes them too) so that each of its pixels gets exactly
// the blend one process gives it.
struct RowBand {
  int first_block = 0, end_block = -1;  // -1: to the plan's last row
  int first_row = 0;
  int end(const TilePlan& plan) const { return end_block < 0 ? int(plan.ys.size()) : end_block; }
  bool empty(const TilePlan& plan) const { return end(plan) <= first_block; }
  int y0(const TilePlan& plan) const;  // the rows written: [y0, y1)
  int y1(const TilePlan& plan) const;
};

// The first window row whose windows reach the rows of block k.
int firstContributingRow(const TilePlan& plan, int block);

// Contiguous bands of blocks for `parts` ranks, with the least windows on the busiest rank
// (`row_windows[k]`: the windows of row k; an extent or a mask leaves rows without any). A
// band computes its blocks' windows, and again the rows above its first block (those of
// firstContributingRow) where that block follows one it does not finish. With a stopped
// run's blocks (`done`, `carried`: finished, and finished with the blend's carry kept; empty:
// none) a finished block costs nothing, and a run of blocks after one costs its rows above
// unless the carry is kept. The first bands are filled up to that least; ranks beyond the
// work get empty bands.
std::vector<RowBand> splitRows(const TilePlan& plan, const std::vector<int64_t>& row_windows, int parts,
                               const std::vector<bool>& done = {}, const std::vector<bool>& carried = {});

// Per-pixel weights of one window (window x window, row-major): 1 in the middle, a small
// positive value over the outer quarter of the `overlap` pixels at the borders (they saw the
// window's padding), rising smoothly (raised cosine) over its middle half, so that a blend
// of overlapping windows sums to one, has no hard cut, and every pixel has weight.
std::vector<float> blendWeights(int window, int overlap);

}  // namespace geodl
