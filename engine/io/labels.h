// Ground truth from vector polygons, rasterized window by window on a raster's exact grid.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/raster.h"

namespace geodl::io {

// Class ids and names. Id 0 is the background (pixels under no polygon).
struct ClassTable {
  bool string_values = false;     // the class field held strings
  std::vector<int> ids;           // ascending, 0 first
  std::vector<std::string> names; // names[i] names ids[i]
  std::string nameOf(int id) const;
};

struct LabelSource {
  std::string path;   // any OGR vector dataset
  std::string layer;  // empty: the first layer
  std::string field;  // integer or string attribute holding the class; empty: a mask
                      // (every polygon is class 1)
  // Class values (as written in the field) whose polygons become the ignore index.
  std::vector<std::string> ignored_values;
};

// Loads the polygons once (reprojected into the raster's CRS when the CRSs differ) and
// rasterizes any window of the raster's grid. Where polygons overlap, the higher class id
// wins (features are burned in ascending class id, then ascending feature id), as
// geo-deep-learning's ORDER BY class ASC did.
class LabelRasterizer {
 public:
  // Reads the layer once. String classes are numbered in sorted order of the names found,
  // from 1, until numberStringClasses() says otherwise. Throws InputError for every
  // problem listed in the README (missing field, no features, non-polygon geometry,
  // missing CRS, no overlap...).
  LabelRasterizer(const LabelSource& source, const RasterInfo& raster, int ignore_index);
  ~LabelRasterizer();

  // The distinct string classes found (sorted; ignored values left out), empty for an
  // integer field.
  std::vector<std::string> stringValues() const;
  // Numbers the string classes by their position in `names`, from 1: one mapping shared
  // by several label files. Throws InputError when a class found is not in `names`.
  void numberStringClasses(const std::vector<std::string>& names);

  // Class id per pixel of window [x, x+w) x [y, y+h): 0 under no polygon.
  void rasterize(int x, int y, int w, int h, std::vector<uint8_t>& labels) const;

  // Every class value found: ids (with 0), names, and whether the field held strings.
  const ClassTable& classes() const { return classes_; }
  // What reading the layer found worth a warning (features without a class).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  // Sorts the shapes into burn order and lists the classes found.
  void sortAndListClasses(const std::vector<std::string>& names);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  ClassTable classes_;
  std::vector<std::string> warnings_;
};

// The string classes that fit beside the background (0) and the ignore index: ids 1..254,
// stopping below the ignore index. Throws InputError naming the count and the fix.
void checkStringClassCount(size_t count, int ignore_index);

}  // namespace geodl::io
