#include "io/raster.h"

#include <atomic>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "base/errors.h"
#include "base/file_kind.h"
#include "io/gdal_util.h"

namespace geodl::io {

struct RasterReader::Impl {
  Dataset ds;
  std::atomic<int64_t> non_finite{0};  // NaN or infinite pixels read so far
};

RasterReader::RasterReader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->ds = openRaster(path);
  GDALDataset* ds = impl_->ds.get();
  info_.path = path;
  info_.width = ds->GetRasterXSize();
  info_.height = ds->GetRasterYSize();
  info_.bands = ds->GetRasterCount();
  if (info_.bands < 1)
    throw InputError(fileKind(path) == FileKind::Hdf5
                         ? "'" + path + "' is " + describeFileKind(FileKind::Hdf5) + ", not a raster; give the raster the samples were cut from"
                         : "the raster '" + path + "' has no band (a container of subdatasets?); give one of its rasters");
  if (ds->GetGeoTransform(info_.geotransform.data()) != CE_None)
    info_.geotransform = {0, 1, 0, 0, 0, 1};
  if (const OGRSpatialReference* srs = ds->GetSpatialRef()) {
    char* wkt = nullptr;
    const char* options[] = {"FORMAT=WKT2_2018", nullptr};
    if (srs->exportToWkt(&wkt, options) == OGRERR_NONE && wkt) info_.crs_wkt = wkt;
    CPLFree(wkt);
  }
  const GDALDataType type = ds->GetRasterBand(1)->GetRasterDataType();
  info_.data_type = GDALGetDataTypeName(type);
  switch (type) {
    case GDT_Byte: case GDT_UInt16: case GDT_Int16: case GDT_UInt32: case GDT_Int32:
    case GDT_Float32: case GDT_Float64: break;
    default:
      throw InputError("the raster '" + path + "' has pixels of type " + info_.data_type +
                       "; use Byte, UInt16, Int16, UInt32, Int32, Float32 or Float64 "
                       "(gdal_translate -ot converts)");
  }
  for (int b = 1; b <= info_.bands; ++b) {
    GDALRasterBand* band = ds->GetRasterBand(b);
    if (band->GetRasterDataType() != type)
      throw InputError("the bands of '" + path + "' differ in data type (band 1 is " +
                       info_.data_type + ", band " + std::to_string(b) + " is " +
                       GDALGetDataTypeName(band->GetRasterDataType()) + ")");
    int has = 0;
    const double value = band->GetNoDataValue(&has);
    info_.has_nodata.push_back(has != 0);
    info_.nodata.push_back(has ? value : 0.0);
    info_.wavelengths.push_back(bandWavelength(band));
  }
  for (double w : info_.wavelengths)
    if (!(w > 0)) {
      info_.wavelengths.clear();
      break;
    }
}

double bandWavelength(void* gdal_band) {
  auto* band = static_cast<GDALRasterBand*>(gdal_band);
  const auto number = [](const char* text) {
    if (!text) return 0.0;
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    return end != text && std::isfinite(v) && v > 0 ? v : 0.0;
  };
  if (const double um = number(band->GetMetadataItem("CENTRAL_WAVELENGTH_UM", "IMAGERY")); um > 0) return um;
  // GDAL's metadata keys are case-insensitive: WAVELENGTH is ENVI's wavelength too.
  const double value = number(band->GetMetadataItem("WAVELENGTH"));
  if (!(value > 0)) return 0.0;
  const char* unit_text = band->GetMetadataItem("WAVELENGTH_UNIT");
  if (!unit_text) unit_text = band->GetMetadataItem("WAVELENGTH_UNITS");
  std::string unit = unit_text ? unit_text : "";
  for (auto& c : unit) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (unit.rfind("nm", 0) == 0 || unit.rfind("nanomet", 0) == 0) return value / 1000.0;
  if (unit.rfind("um", 0) == 0 || unit.rfind("microm", 0) == 0 || unit.rfind("micron", 0) == 0 || unit == "\u00b5m" ||
      unit == "\u03bcm")
    return value;
  if (unit.empty()) return value > 100 ? value / 1000.0 : value;
  return 0.0;
}

RasterReader::~RasterReader() = default;

void RasterReader::read(int x, int y, int w, int h, std::vector<double>& values,
                        std::vector<uint8_t>& valid) const {
  const int bands = info_.bands;
  values.assign(size_t(w) * h * bands, 0.0);
  valid.assign(size_t(w) * h, 0);
  // The part of the window inside the raster.
  const int x0 = std::max(x, 0), y0 = std::max(y, 0);
  const int x1 = std::min(x + w, info_.width), y1 = std::min(y + h, info_.height);
  if (x1 <= x0 || y1 <= y0) return;
  const int iw = x1 - x0, ih = y1 - y0;
  double* first = values.data() + (size_t(y0 - y) * w + (x0 - x)) * bands;
  // Pixel-interleaved straight into the window's buffer: pixel, line and band spacing.
  const GSpacing pixel = GSpacing(bands) * sizeof(double);
  const GSpacing line = GSpacing(w) * pixel;
  CPLErrorReset();
  if (impl_->ds->RasterIO(GF_Read, x0, y0, iw, ih, first, iw, ih, GDT_Float64, bands, nullptr,
                          pixel, line, sizeof(double), nullptr) != CE_None) {
    const char* last = CPLGetLastErrorMsg();
    throw RasterReadError("cannot read the raster '" + info_.path + "' at column " + std::to_string(x0) + ", row " +
                  std::to_string(y0) + ": the file is damaged or truncated, or its disk failed" +
                  (last && *last ? std::string(" (GDAL: ") + last + ")" : std::string()) +
                  "; copy it again, or check it with gdalinfo -checksum");
  }
  bool any_nodata = false;
  for (int b = 0; b < bands; ++b) any_nodata = any_nodata || info_.has_nodata[b];
  const bool floats = info_.data_type == "Float32" || info_.data_type == "Float64";
  int64_t non_finite = 0;
  for (int r = y0; r < y1; ++r) {
    for (int c = x0; c < x1; ++c) {
      const size_t p = size_t(r - y) * w + (c - x);
      bool is_valid = true;
      if (floats) {
        // NaN or infinite in any band: nodata, declared or not, and 0 so that it cannot
        // spread through sums and convolutions.
        bool finite = true;
        for (int b = 0; b < bands; ++b) {
          double& v = values[p * bands + b];
          if (!std::isfinite(v)) {
            finite = false;
            v = 0.0;
          }
        }
        if (!finite) {
          valid[p] = 0;
          ++non_finite;
          continue;
        }
      }
      if (any_nodata) {
        // Nodata when every band that declares a nodata value holds it (or is NaN).
        bool all_nodata = true;
        for (int b = 0; b < bands && all_nodata; ++b) {
          const double v = values[p * bands + b];
          all_nodata = info_.has_nodata[b] &&
                       (v == info_.nodata[b] || (std::isnan(v) && std::isnan(info_.nodata[b])));
        }
        is_valid = !all_nodata;
      }
      valid[p] = is_valid ? 1 : 0;
    }
  }
  if (non_finite > 0) impl_->non_finite += non_finite;
}

int64_t RasterReader::undeclaredNonFinitePixels() const {
  for (int b = 0; b < info_.bands; ++b)
    if (info_.has_nodata[b] && std::isnan(info_.nodata[b])) return 0;  // declared: NaN is its nodata
  return impl_->non_finite.load();
}

std::vector<std::string> rastersInFolder(const std::string& folder) {
  initGdal();
  std::vector<std::string> rasters;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    const auto ends = [&](const std::string& tail) {
      return name.size() >= tail.size() &&
             std::equal(tail.rbegin(), tail.rend(), name.rbegin(),
                        [](char a, char b) { return std::tolower((unsigned char)a) == std::tolower((unsigned char)b); });
    };
    if (!entry.is_regular_file() || ends(".aux.xml") || ends(".ovr") || ends(".msk")) continue;
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);  // a file that is no raster is skipped silently
    Dataset ds(static_cast<GDALDataset*>(
        GDALOpenEx(entry.path().c_str(), GDAL_OF_RASTER | GDAL_OF_READONLY, nullptr, nullptr, nullptr)));
    // A file a raster driver recognizes but cannot open (a truncated GeoTIFF) is listed, so
    // that the job names it instead of leaving it out unseen.
    const bool damaged = !ds && GDALIdentifyDriverEx(entry.path().c_str(), GDAL_OF_RASTER, nullptr, nullptr);
    if ((ds && ds->GetRasterCount() > 0) || damaged) rasters.push_back(entry.path().string());
  }
  std::sort(rasters.begin(), rasters.end());
  return rasters;
}

std::vector<std::string> categoryNames(const std::string& path) {
  Dataset ds = openRaster(path);
  // GDAL 3.6's GTiff driver loads the .aux.xml (where category names live) only once
  // something else asks for georeferencing.
  double geotransform[6];
  ds->GetGeoTransform(geotransform);
  std::vector<std::string> names;
  char** categories = ds->GetRasterBand(1)->GetCategoryNames();
  for (int i = 0; categories && categories[i]; ++i) names.push_back(categories[i]);
  return names;
}

CrsUnits crsUnits(const std::string& wkt) {
  CrsUnits units;
  if (wkt.empty()) return units;
  OGRSpatialReference srs;
  if (srs.importFromWkt(wkt.c_str()) != OGRERR_NONE) return units;
  if (srs.IsGeographic()) {
    units.name = "degree";
    units.geographic = true;
  } else if (srs.IsProjected() || srs.IsLocal()) {
    const char* name = nullptr;
    units.metres = srs.GetLinearUnits(&name);
    units.name = name && *name ? name : "metre";
  }
  return units;
}

std::vector<std::array<double, 2>> approximateValueRange(const std::string& path) {
  Dataset ds = openRaster(path);
  std::vector<std::array<double, 2>> ranges;
  for (int b = 1; b <= ds->GetRasterCount(); ++b) {
    double minmax[2] = {std::nan(""), std::nan("")};
    CPLErrorHandlerPusher quiet(CPLQuietErrorHandler);  // an all-nodata band: NaN, not a message
    if (GDALComputeRasterMinMax(GDALRasterBand::ToHandle(ds->GetRasterBand(b)), TRUE, minmax) != CE_None)
      minmax[0] = minmax[1] = std::nan("");
    ranges.push_back({minmax[0], minmax[1]});
  }
  return ranges;
}

}  // namespace geodl::io
