// Sliding windows over a raster for classification, and the weights that blend them:
// every pixel is covered (right and bottom edges included, rasters smaller than a window
// too), and overlapping predictions fade into each other instead of meeting at a seam.
// Standard library only.
#pragma once

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
// raster's edge; one window along a side shorter than the window. overlap_percent is
// geo-deep-learning's `overlap`: a percentage of the window. Throws InputError when the
// window is not larger than twice the overlap, or a size is not positive.
TilePlan planTiles(int width, int height, int window, double overlap_percent);

// Per-pixel weights of one window (window x window, row-major): 1 in the middle, rising
// smoothly (raised cosine) from a small positive value at the borders over `overlap`
// pixels, so that a blend of overlapping windows has no hard cut and every pixel has
// weight.
std::vector<float> blendWeights(int window, int overlap);

}  // namespace geodl
