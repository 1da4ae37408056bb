// The validation polygons of a sample split, in a raster's CRS: which windows they hold.
#pragma once

#include <array>
#include <memory>
#include <string>

namespace geodl::io {

struct RasterInfo;

class ValidationArea {
 public:
  enum class Place { Outside, Inside, Straddles };

  // The polygons of `layer` (empty: the first) of `path`, read once and merged. Throws
  // InputError for a missing layer, no CRS or no polygon.
  ValidationArea(const std::string& path, const std::string& layer);
  ~ValidationArea();
  ValidationArea(ValidationArea&&) noexcept;

  // The area reprojected onto a raster's grid (its CRS and geotransform), for place(). Throws
  // InputError when the polygons cannot be reprojected.
  ValidationArea onGridOf(const RasterInfo& raster) const;

  // Where the window of `size` pixels at column x, row y of that raster falls.
  Place place(int x, int y, int size) const;

 private:
  struct Impl;
  explicit ValidationArea(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace geodl::io
