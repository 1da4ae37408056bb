// Class rasters to polygons: one GeoPackage layer of the classes' areas.
#pragma once

#include <string>
#include <vector>

#include "base/atomic_file.h"

namespace geodl::io {

struct PolygonizeResult {
  int64_t polygons = 0;  // written
  int64_t dropped = 0;   // under the minimum area
};

// Polygonizes band 1 of `raster` (nodata left out) into layer "classes" of a new
// GeoPackage, fields class_id, class_name (names[class id]) and area (map units squared);
// polygons under min_area are dropped. Written under `gpkg`'s temporary name and finished
// there: the caller commits it with the job's other outputs. Throws IoError naming the file.
PolygonizeResult polygonizeClasses(const std::string& raster, AtomicOutput& gpkg,
                                   const std::vector<std::string>& names, double min_area);

// The same into a GeoPackage renamed into place when complete.
PolygonizeResult polygonizeClasses(const std::string& raster, const std::string& gpkg,
                                   const std::vector<std::string>& names, double min_area);

}  // namespace geodl::io
