#include "io/gdal_util.h"

#include <cpl_error.h>

#include <cerrno>
#include <cmath>
#include <mutex>
#include <sstream>

#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/file_kind.h"
#include "base/metadata.h"
#include "io/raster.h"

namespace geodl::io {

void initGdal() {
  static std::once_flag once;
  std::call_once(once, [] {
    GDALAllRegister();
    // Windowed reads go through GDAL's block cache, read row of windows after row of
    // windows: 64 MB holds the blocks of a row of 256-pixel windows across a 3-band raster
    // of some 40000 columns, and caps what a raster of any size can take.
    if (GDALGetCacheMax64() > (int64_t(64) << 20)) GDALSetCacheMax64(int64_t(64) << 20);
  });
}

IoError gdalWriteFailure(const std::string& what, const std::string& path) {
  const int error = errno;
  const char* last = CPLGetLastErrorMsg();
  return writeFailure(what, path, error, last && *last ? last : "");
}

void closeWritten(Dataset& ds, const std::string& what, const std::string& path) {
  CPLErrorReset();
  errno = 0;
  ds.reset();
  if (CPLGetLastErrorType() >= CE_Failure) throw gdalWriteFailure(what, path);
}

std::string gdalMessage(const std::string& what) {
  const char* last = CPLGetLastErrorMsg();
  if (last && *last) return what + ": " + last;
  return what;
}

namespace {
Dataset openDataset(const std::string& path, unsigned flags, const std::string& what) {
  if (fileKind(path) == FileKind::Special)  // before GDAL opens it: a FIFO would block
    throw IoError("cannot open the " + what + " '" + path + "': it is " + describeFileKind(FileKind::Special) +
                  "; give a " + what + " file");
  initGdal();
  CPLErrorReset();
  auto* ds = static_cast<GDALDataset*>(
      GDALOpenEx(path.c_str(), flags | GDAL_OF_READONLY, nullptr, nullptr, nullptr));
  if (ds) return Dataset(ds);
  const std::string gdal = CPLGetLastErrorMsg();
  const std::string head = "cannot open the " + what + " '" + path + "': ";
  const FileKind kind = fileKind(path);
  switch (kind) {
    case FileKind::Missing:
      throw IoError(head + "it does not exist; check the path (a path in a CSV is relative to the CSV's folder)");
    case FileKind::Folder:
    case FileKind::Special:
    case FileKind::Empty:
    case FileKind::ZipArchive:
    case FileKind::Hdf5:
      throw IoError(head + "it is " + describeFileKind(kind) + ", not a " + what);
    case FileKind::GeoTiff:
    case FileKind::GeoPackage:
      throw IoError(head + "it is " + describeFileKind(kind) + " that GDAL cannot open as a " + what +
                    (gdal.empty() ? std::string() : " (" + gdal + ")") + "; give a " + what + ", or check that it is complete");
    default:
      throw IoError(head + (gdal.empty() ? std::string("GDAL cannot read it") : gdal) +
                    "; check that it is a " + what + " GDAL reads, and that it is complete");
  }
}
}  // namespace

Dataset openRaster(const std::string& path) { return openDataset(path, GDAL_OF_RASTER, "raster"); }

Dataset openVector(const std::string& path) {
  return openDataset(path, GDAL_OF_VECTOR, "vector file");
}

std::unique_ptr<OGRSpatialReference> gisSrs(const OGRSpatialReference* srs) {
  if (!srs) return nullptr;
  auto copy = std::make_unique<OGRSpatialReference>(*srs);
  copy->SetAxisMappingStrategy(OAMS_TRADITIONAL_GIS_ORDER);
  return copy;
}

std::string formatExtent(const OGREnvelope& e) {
  std::ostringstream s;
  s.precision(12);
  s << "(" << e.MinX << ", " << e.MinY << ") - (" << e.MaxX << ", " << e.MaxY << ")";
  return s.str();
}

void markWrittenByGeoDL(GDALDataset& ds) {
  const std::string driver = ds.GetDriver() ? ds.GetDriver()->GetDescription() : "";
  if (driver == "GTiff" || driver == "COG")
    ds.SetMetadataItem("TIFFTAG_SOFTWARE", (std::string("GeoDL ") + metadata::kVersion).c_str());
  else
    ds.SetMetadataItem("GEODL_VERSION", metadata::kVersion);
}

bool writtenByGeoDL(const std::string& path) {
  const FileKind kind = fileKind(path);
  if (kind != FileKind::GeoTiff && kind != FileKind::GeoPackage && kind != FileKind::Vrt) return false;
  initGdal();
  CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);
  Dataset ds(GDALDataset::Open(path.c_str(), GDAL_OF_READONLY | GDAL_OF_RASTER | GDAL_OF_VECTOR));
  if (!ds) return false;
  if (kind == FileKind::GeoTiff) {
    const char* software = ds->GetMetadataItem("TIFFTAG_SOFTWARE");
    return software && std::string(software).rfind("GeoDL", 0) == 0;
  }
  return ds->GetMetadataItem("GEODL_VERSION") != nullptr;
}

void quietLibraryMessages() { CPLSetErrorHandler(CPLQuietErrorHandler); }

void checkDegrees(OGRLayer& layer, const OGRSpatialReference& srs, const std::string& what) {
  OGREnvelope extent;
  if (!srs.IsGeographic() || layer.GetExtent(&extent, TRUE) != OGRERR_NONE) return;
  if (std::abs(extent.MinX) <= 360 && std::abs(extent.MaxX) <= 360 && std::abs(extent.MinY) <= 90 &&
      std::abs(extent.MaxY) <= 90)
    return;
  throw InputError(what + " is in a geographic CRS (" + (srs.GetName() ? srs.GetName() : "in degrees") +
                   "), but its coordinates reach " + formatExtent(extent) +
                   ", which are not degrees (a GeoJSON without a \"crs\" member is WGS 84 by its standard); assign "
                   "its real CRS (ogr2ogr -a_srs EPSG:xxxx)");
}

}  // namespace geodl::io
