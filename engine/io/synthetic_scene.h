// A realistic synthetic scene for the demo and the tests: a georeferenced RGB raster with
// buildings, roads, water and vegetation drawn with texture and noise, and their polygons.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/atomic_file.h"

namespace geodl::io {

struct SceneOptions {
  int size = 1024;           // pixels per side
  double pixel_size = 0.5;   // metres
  uint64_t seed = 1;
  int epsg = 32618;          // WGS 84 / UTM zone 18N
  double origin_x = 500000;  // upper-left corner
  double origin_y = 5000000;
};

struct SceneFiles {
  std::string raster;  // <folder>/<name>.tif: 3 bands, Byte, tiled GeoTIFF
  std::string labels;  // <folder>/<name>_labels.gpkg: layer "labels", fields class (string), class_id
};

// Class names and ids as the scene's string field maps them (sorted): building 1, road 2,
// vegetation 3, water 4; 0 is the background. Each file is written under a temporary name
// and moved into place when complete. With `pending`, they are left there, finished, for the
// caller to move into place with its other files (or to discard, by destroying them).
// Write failures (a full disk) are IoErrors naming the file.
SceneFiles makeSyntheticScene(const std::string& folder, const std::string& name,
                              const SceneOptions& options, std::vector<AtomicOutput>* pending = nullptr);

}  // namespace geodl::io
