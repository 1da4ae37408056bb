// Classification at the model's pixel size (classify's resample): the raster read through a
// resampled view of it, and the outputs computed on the view brought back to the raster's
// own grid.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/tiles.h"
#include "io/raster.h"

namespace geodl::io {

// `path` resampled on the fly to width x height pixels over the same extent: a GDAL VRT in
// memory (/vsimem/), with the raster's CRS, nodata and band metadata. Values are averaged
// where the view is coarser than the raster and interpolated bilinearly where it is finer.
// The VRT goes when the view does.
class ResampledView {
 public:
  ResampledView(const std::string& path, int width, int height);
  ~ResampledView();
  ResampledView(const ResampledView&) = delete;
  ResampledView& operator=(const ResampledView&) = delete;
  const std::string& path() const { return path_; }
  // "average" or "bilinear"
  const char* method() const { return method_; }

 private:
  std::string path_;
  const char* method_ = "average";
};

// What copyToGrid wrote: pixels per class id (256 entries; 255 is nodata).
struct GridCounts {
  std::vector<int64_t> id_pixels = std::vector<int64_t>(256, 0);
};

// Copies a class raster (and its probability raster, when `sink` wants them) computed on a
// view of `input` to `sink` on `input`'s own grid (the same extent), 256 rows at a time:
// classes by the nearest pixel where the grid is finer than the view and by the most frequent
// one where it is coarser; probabilities interpolated bilinearly or averaged. A pixel that is
// nodata in `input` is nodata (255, probabilities 0). Calls `step` with the rows done after
// each strip. Throws IoError naming a file that cannot be read.
GridCounts copyToGrid(const std::string& classes, const std::string& probabilities, const RasterReader& input,
                      TileSink& sink, const std::function<void(int)>& step);

}  // namespace geodl::io
