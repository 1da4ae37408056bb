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

  // The polygons of `layer` (empty: the first) of `path`, merged and reprojected into the
  // raster's CRS. Throws InputError for a missing layer, no CRS, no polygon, or polygons
  // that cannot be reprojected.
  ValidationArea(const std::string& path, const std::string& layer, const RasterInfo& raster);
  ~ValidationArea();
  ValidationArea(ValidationArea&&) noexcept;

  // Where the window of `size` pixels at column x, row y of the raster falls.
  Place place(int x, int y, int size) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace geodl::io
