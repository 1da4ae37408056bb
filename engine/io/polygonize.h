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

// A class raster shared by ranks in parts (io/parts_vrt.h), polygonized on every rank:
// the polygons of one part (field class_id; none dropped) into a new GeoPackage at `gpkg`.
// Throws IoError naming the file.
void polygonizePart(const std::string& raster, const std::string& gpkg);

// The parts' polygons (polygonizePart's files, in row order) as polygonizeClasses gives the
// whole raster's: same-class polygons that meet along a border between two parts (an edge,
// not a corner) are merged into one, then named, measured and dropped under min_area.
// `borders[k]`: the map y of the border between parts k and k + 1; `tolerance`: of those
// coordinates (a small fraction of a pixel). Written under `gpkg`'s temporary name and
// finished there. Throws IoError.
PolygonizeResult mergePartPolygons(const std::vector<std::string>& parts, const std::vector<double>& borders,
                                   double tolerance, AtomicOutput& gpkg, const std::vector<std::string>& names,
                                   double min_area);

// The same into a GeoPackage renamed into place when complete.
PolygonizeResult polygonizeClasses(const std::string& raster, const std::string& gpkg,
                                   const std::vector<std::string>& names, double min_area);

}  // namespace geodl::io
