// GDAL plumbing shared by the io layer: registration, error messages, handles.
#pragma once

#include <gdal_priv.h>
#include <ogrsf_frmts.h>

#include <memory>
#include <string>

#include "base/errors.h"

namespace geodl::io {

// Registers GDAL's drivers once and bounds its block cache, so that windowed reads of a
// raster of any size use a fixed amount of memory.
void initGdal();

// `what`, followed by GDAL's last error message when there is one.
std::string gdalMessage(const std::string& what);

// The IoError for a failed write of `what` (e.g. "the footprint layer 'x.gpkg'") at `path`:
// "no space left on the device" when that is why (errno, or the free space), else GDAL's
// last message. Call CPLErrorReset() and clear errno before the write.
IoError gdalWriteFailure(const std::string& what, const std::string& path);

struct DatasetCloser {
  void operator()(GDALDataset* ds) const { GDALClose(ds); }
};
using Dataset = std::unique_ptr<GDALDataset, DatasetCloser>;

// Closes `ds` and throws gdalWriteFailure when closing reported an error (the last blocks
// and the sidecar .aux.xml are written then).
void closeWritten(Dataset& ds, const std::string& what, const std::string& path);

// Marks a dataset GeoDL creates as its own (GeoTIFF: TIFFTAG_SOFTWARE "GeoDL VERSION";
// GeoPackage: the metadata item GEODL_VERSION), for writtenByGeoDL() (io/raster.h).
void markWrittenByGeoDL(GDALDataset& ds);

// Opens a raster (readonly); throws IoError naming the file.
Dataset openRaster(const std::string& path);
// Opens a vector dataset (readonly); throws IoError naming the file.
Dataset openVector(const std::string& path);

// A spatial reference with x/y in the traditional GIS order (easting, northing).
std::unique_ptr<OGRSpatialReference> gisSrs(const OGRSpatialReference* srs);

// "(minx, miny) - (maxx, maxy)"
std::string formatExtent(const OGREnvelope& e);
// Throws InputError naming `what` when `srs` (the layer's) is geographic but the layer's
// coordinates are not degrees: a GeoJSON without a "crs" member is WGS 84 by its standard,
// whatever its numbers, and PROJ then failed on every feature in its own words.
void checkDegrees(OGRLayer& layer, const OGRSpatialReference& srs, const std::string& what);

}  // namespace geodl::io
