#include "io/gis_fixtures.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>

#include "base/errors.h"
#include "io/gdal_util.h"

namespace geodl::test {

namespace fs = std::filesystem;

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  root_ = (fs::temp_directory_path() /
           ("geodl_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++)))
              .string();
  fs::remove_all(root_);
  fs::create_directories(root_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

std::string TempDir::path(const std::string& name) const { return (fs::path(root_) / name).string(); }

std::string makeRaster(const std::string& path, const RasterSpec& s) {
  io::initGdal();
  GDALDriver* driver = GetGDALDriverManager()->GetDriverByName("GTiff");
  io::Dataset ds(driver->Create(path.c_str(), s.width, s.height, s.bands, s.type, nullptr));
  if (!ds) throw std::runtime_error("cannot create " + path);
  double gt[6];
  std::copy(s.geotransform.begin(), s.geotransform.end(), gt);
  ds->SetGeoTransform(gt);
  if (s.epsg) {
    OGRSpatialReference srs;
    srs.importFromEPSG(s.epsg);
    ds->SetSpatialRef(&srs);
  }
  std::vector<double> values(size_t(s.width) * s.height);
  for (int b = 0; b < s.bands; ++b) {
    for (int r = 0; r < s.height; ++r)
      for (int c = 0; c < s.width; ++c) values[size_t(r) * s.width + c] = s.value(c, r, b);
    GDALRasterBand* band = ds->GetRasterBand(b + 1);
    if (s.nodata) band->SetNoDataValue(*s.nodata);
    if (band->RasterIO(GF_Write, 0, 0, s.width, s.height, values.data(), s.width, s.height,
                       GDT_Float64, 0, 0, nullptr) != CE_None)
      throw std::runtime_error("cannot write " + path);
  }
  return path;
}

std::string makeVector(const std::string& path, int epsg, const std::string& field,
                       OGRFieldType field_type, const std::vector<Polygon>& polygons) {
  io::initGdal();
  auto ends = [&](const std::string& ext) {
    return path.size() > ext.size() && path.substr(path.size() - ext.size()) == ext;
  };
  GDALDriver* driver = GetGDALDriverManager()->GetDriverByName(
      ends(".gpkg") ? "GPKG" : ends(".shp") ? "ESRI Shapefile" : "GeoJSON");
  io::Dataset ds(driver->Create(path.c_str(), 0, 0, 0, GDT_Unknown, nullptr));
  if (!ds) throw std::runtime_error("cannot create " + path);
  OGRSpatialReference srs;
  OGRSpatialReference* srs_ptr = nullptr;
  if (epsg) {
    srs.importFromEPSG(epsg);
    srs_ptr = &srs;
  }
  // Shapefiles hold one geometry type: polygons, unless a test writes something else.
  const bool lines = !polygons.empty() && polygons[0].wkt.rfind("LINESTRING", 0) == 0;
  OGRLayer* layer = ds->CreateLayer("truth", srs_ptr,
                                    std::string(driver->GetDescription()) == "ESRI Shapefile"
                                        ? (lines ? wkbLineString : wkbPolygon)
                                        : wkbUnknown,
                                    nullptr);
  OGRFieldDefn defn(field.c_str(), field_type);
  layer->CreateField(&defn);
  for (const auto& p : polygons) {
    OGRFeature f(layer->GetLayerDefn());
    if (p.value == kNull)
      f.SetFieldNull(f.GetFieldIndex(field.c_str()));
    else if (field_type == OFTInteger)
      f.SetField(field.c_str(), std::stoi(p.value));
    else
      f.SetField(field.c_str(), p.value.c_str());
    OGRGeometry* g = nullptr;
    if (OGRGeometryFactory::createFromWkt(p.wkt.c_str(), nullptr, &g) != OGRERR_NONE)
      throw std::runtime_error("bad WKT " + p.wkt);
    f.SetGeometryDirectly(g);
    if (layer->CreateFeature(&f) != OGRERR_NONE) throw std::runtime_error("cannot write " + path);
  }
  return path;
}

std::string box(double x0, double y0, double x1, double y1) {
  std::ostringstream s;
  s.precision(15);
  s << "POLYGON ((" << x0 << " " << y0 << ", " << x1 << " " << y0 << ", " << x1 << " " << y1
    << ", " << x0 << " " << y1 << ", " << x0 << " " << y0 << "))";
  return s.str();
}

std::string boxIn(int from_epsg, int to_epsg, double x0, double y0, double x1, double y1) {
  OGRSpatialReference from, to;
  from.importFromEPSG(from_epsg);
  to.importFromEPSG(to_epsg);
  from.SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
  to.SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
  std::unique_ptr<OGRCoordinateTransformation> ct(OGRCreateCoordinateTransformation(&from, &to));
  // Densified edges, so the reprojected polygon follows the original closely.
  OGRGeometry* g = nullptr;
  const std::string wkt = box(x0, y0, x1, y1);
  OGRGeometryFactory::createFromWkt(wkt.c_str(), nullptr, &g);
  g->segmentize(0.25);
  g->transform(ct.get());
  char* out = nullptr;
  g->exportToWkt(&out, wkbVariantIso);
  std::string result = out;
  CPLFree(out);
  OGRGeometryFactory::destroyGeometry(g);
  return result;
}

void expectErrorContaining(const std::function<void()>& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing: " << part;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

std::string massachusettsFolder() {
  for (const char* candidate : {"../shared/data/massachusetts", "../../shared/data/massachusetts",
                                "../../../shared/data/massachusetts"}) {
    const fs::path p = fs::path(GEODL_TEST_SOURCE_DIR) / ".." / candidate;
    if (fs::exists(p / "22978945_15.tif")) return fs::canonical(p).string();
  }
  return "";
}

}  // namespace geodl::test
