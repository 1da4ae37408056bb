// The samples' footprints as a GeoPackage layer: one polygon per sample.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace geodl::io {

// Written under a temporary name; finish() completes it there and commit() renames it into
// place (finishing it first when needed); destruction without commit() removes it.
class FootprintWriter {
 public:
  // class_ids: one integer field `class_<id>` per class with its pixel count.
  FootprintWriter(const std::string& path, const std::string& crs_wkt,
                  const std::vector<int>& class_ids);
  ~FootprintWriter();
  FootprintWriter(const FootprintWriter&) = delete;
  FootprintWriter& operator=(const FootprintWriter&) = delete;

  // corners of the window in map coordinates, from its geotransform and size.
  void add(const std::string& split, int64_t index, const std::string& source,
           const std::array<int, 4>& window, const std::array<double, 6>& geotransform,
           const std::vector<int64_t>& class_pixels);
  void finish();
  void commit();
  const std::string& path() const { return path_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string path_;
};

}  // namespace geodl::io
