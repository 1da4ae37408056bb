#include "io/polygonize.h"

#include <gdal_alg.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "base/atomic_file.h"
#include "base/errors.h"
#include "io/gdal_util.h"

namespace geodl::io {

namespace fs = std::filesystem;

PolygonizeResult polygonizeClasses(const std::string& raster, AtomicOutput& output,
                                   const std::vector<std::string>& names, double min_area) {
  initGdal();
  Dataset source = openRaster(raster);
  GDALRasterBand* band = source->GetRasterBand(1);
  const std::string& gpkg = output.path();
  const std::string what = "the polygon file '" + gpkg + "'";
  const std::string& temp = output.temporary();
  std::remove(temp.c_str());
  PolygonizeResult result;
  {
    GDALDriver* driver = GetGDALDriverManager()->GetDriverByName("GPKG");
    CPLErrorReset();
    errno = 0;
    Dataset out(driver->Create(temp.c_str(), 0, 0, 0, GDT_Unknown, nullptr));
    if (!out) throw gdalWriteFailure(what, gpkg);
    markWrittenByGeoDL(*out);
    OGRSpatialReference* srs = const_cast<OGRSpatialReference*>(source->GetSpatialRef());  // 3.6 API
    OGRLayer* layer = out->CreateLayer("classes", srs, wkbPolygon, nullptr);
    OGRFieldDefn id("class_id", OFTInteger), name("class_name", OFTString), area("area", OFTReal);
    if (!layer || layer->CreateField(&id) != OGRERR_NONE || layer->CreateField(&name) != OGRERR_NONE ||
        layer->CreateField(&area) != OGRERR_NONE) {
      throw gdalWriteFailure(what, gpkg);
    }
    // Polygonize into memory first, then keep the polygons large enough.
    GDALDriver* memory = GetGDALDriverManager()->GetDriverByName("Memory");
    Dataset scratch(memory->Create("", 0, 0, 0, GDT_Unknown, nullptr));
    OGRLayer* raw = scratch->CreateLayer("raw", srs, wkbPolygon, nullptr);
    OGRFieldDefn value("class_id", OFTInteger);
    raw->CreateField(&value);
    if (GDALPolygonize(band, band->GetMaskBand(), raw, 0, nullptr, nullptr, nullptr) != CE_None) {
      throw IoError(gdalMessage("polygonizing '" + raster + "' failed"));
    }
    CPLErrorReset();
    errno = 0;
    if (layer->StartTransaction() != OGRERR_NONE) throw gdalWriteFailure(what, gpkg);
    raw->ResetReading();
    for (auto& feature : *raw) {
      const OGRGeometry* geometry = feature->GetGeometryRef();
      const double a = geometry ? geometry->toPolygon()->get_Area() : 0.0;
      if (a < min_area) {
        ++result.dropped;
        continue;
      }
      const int cls = feature->GetFieldAsInteger(0);
      OGRFeature f(layer->GetLayerDefn());
      f.SetField(0, cls);
      f.SetField(1, cls >= 0 && size_t(cls) < names.size() ? names[size_t(cls)].c_str() : "");
      f.SetField(2, a);
      f.SetGeometry(geometry);
      if (layer->CreateFeature(&f) != OGRERR_NONE) {
        IoError failure = gdalWriteFailure(what, gpkg);
        (void)layer->RollbackTransaction();  // the file is removed anyway
        throw failure;
      }
      ++result.polygons;
    }
    if (layer->CommitTransaction() != OGRERR_NONE) throw gdalWriteFailure(what, gpkg);
    closeWritten(out, what, gpkg);
  }
  output.finish();
  return result;
}

PolygonizeResult polygonizeClasses(const std::string& raster, const std::string& gpkg,
                                   const std::vector<std::string>& names, double min_area) {
  // Removes the temporary file on any failure.
  AtomicOutput output(gpkg, ".gpkg");
  const PolygonizeResult result = polygonizeClasses(raster, output, names, min_area);
  output.commit();
  return result;
}

}  // namespace geodl::io
