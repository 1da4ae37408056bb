// Small rasters and vector layers made by the tests themselves, in a temporary folder.
#pragma once

#include <gdal_priv.h>
#include <ogrsf_frmts.h>

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace geodl::test {

// A fresh folder under /tmp, removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  std::string path(const std::string& name) const;
  const std::string& root() const { return root_; }

 private:
  std::string root_;
};

struct RasterSpec {
  int width = 20, height = 10, bands = 1;
  GDALDataType type = GDT_Byte;
  std::array<double, 6> geotransform{1000, 1, 0, 2000, 0, -1};
  int epsg = 32618;  // 0: no CRS
  std::optional<double> nodata;
  std::function<double(int col, int row, int band)> value = [](int, int, int) { return 0.0; };
};
std::string makeRaster(const std::string& path, const RasterSpec& spec);

struct Polygon {
  std::string wkt;    // in the layer's CRS
  std::string value;  // class value (written as integer when the field is an integer field)
};
// A Polygon's value that leaves its field null.
inline const std::string kNull = "<null>";
// field_type: OFTInteger, OFTReal or OFTString. epsg 0: no CRS.
std::string makeVector(const std::string& path, int epsg, const std::string& field,
                       OGRFieldType field_type, const std::vector<Polygon>& polygons);

// "POLYGON ((x0 y0, x1 y0, x1 y1, x0 y1, x0 y0))"
std::string box(double x0, double y0, double x1, double y1);
// The same box with each corner transformed from one EPSG code to another.
std::string boxIn(int from_epsg, int to_epsg, double x0, double y0, double x1, double y1);

// Runs f and expects a geodl::Error whose message contains `part`.
void expectErrorContaining(const std::function<void()>& f, const std::string& part);

// The real data of ../shared/data/massachusetts, or empty when absent.
std::string massachusettsFolder();

}  // namespace geodl::test
