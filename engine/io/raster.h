// Windowed raster reading: any GDAL format and band count, nodata honoured.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace geodl::io {

struct RasterInfo {
  std::string path;
  int width = 0;
  int height = 0;
  int bands = 0;
  std::string data_type;  // GDAL's name of the first band's type: Byte, UInt16, Int16, Float32...
  std::array<double, 6> geotransform{0, 1, 0, 0, 0, 1};
  std::string crs_wkt;  // empty: no CRS
  std::vector<bool> has_nodata;
  std::vector<double> nodata;
  // Each band's central wavelength in micrometres, from its metadata (bandWavelength); empty
  // unless every band has one.
  std::vector<double> wavelengths;
};

// A band's central wavelength in micrometres from its GDAL metadata, 0 where it has none:
// CENTRAL_WAVELENGTH_UM of the IMAGERY domain (GDAL 3.10's convention), else WAVELENGTH with
// WAVELENGTH_UNIT (the SENTINEL2 driver's; nm, um or micrometers) or ENVI's wavelength with
// wavelength_units. A value without unit over 100 counts as nanometres; one in another unit
// is not read.
double bandWavelength(void* gdal_band);

class RasterReader {
 public:
  // Throws IoError when the file cannot be opened, InputError when its bands differ in type
  // or its type is not one of Byte, UInt16, Int16, UInt32, Int32, Float32, Float64.
  explicit RasterReader(const std::string& path);
  ~RasterReader();
  RasterReader(const RasterReader&) = delete;
  RasterReader& operator=(const RasterReader&) = delete;

  const RasterInfo& info() const { return info_; }

  // Reads window [x, x+w) x [y, y+h) of every band, pixel-interleaved (h x w x bands), into
  // `values`. The window may reach outside the raster: pixels there are 0. `valid` (h x w)
  // is 1 where the pixel lies inside the raster and is not nodata in all of its bands. A
  // pixel with a NaN or infinite band is nodata, its values 0.
  void read(int x, int y, int w, int h, std::vector<double>& values,
            std::vector<uint8_t>& valid) const;

  // NaN or infinite pixels read so far that the raster does not declare as nodata (0 when
  // its nodata value is NaN): the jobs warn about them.
  int64_t undeclaredNonFinitePixels() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  RasterInfo info_;
};

// The rasters of a folder, in name order: every regular file GDAL opens as a raster with at
// least one band, whatever its extension (GeoTIFF, VRT, JPEG 2000, ERDAS IMG...), except the
// sidecars GDAL keeps beside rasters (.aux.xml, .ovr, .msk), and every file a raster driver
// recognizes but cannot open (a truncated GeoTIFF: opening it names the fault). Not recursive.
std::vector<std::string> rastersInFolder(const std::string& folder);

// GDAL, OGR, PROJ and libtiff print their errors and warnings to stderr in their own words
// ("ERROR 1: TIFFReadEncodedTile() failed", five "Invalid latitude" lines); the command line
// turns that off: GeoDL's messages name the file, the problem and the fix, with the
// library's last words where they help. (QGIS keeps its own handler: it logs them.)
void quietLibraryMessages();

// Whether GeoDL wrote the GeoTIFF, GeoPackage or VRT at `path` (its mark: see the writers); false
// for other files and for GeoDL's outputs from before the mark.
bool writtenByGeoDL(const std::string& path);

// The category names of a raster's first band (a class raster's class names, by value).
std::vector<std::string> categoryNames(const std::string& path);

// What a CRS's coordinates count in: "degree" for a geographic CRS, otherwise its linear
// unit ("metre", "US survey foot") and that unit's length in metres. An empty name where the
// CRS is unknown (no WKT, or one PROJ cannot read).
struct CrsUnits {
  std::string name;
  double metres = 0;  // projected: the unit's length in metres
  bool geographic = false;
};
CrsUnits crsUnits(const std::string& wkt);

// Each band's smallest and largest value, from GDAL's approximate statistics (its overviews,
// or a sample of its blocks; nodata left out), without writing anything beside the raster.
// NaN for a band without a valid value.
std::vector<std::array<double, 2>> approximateValueRange(const std::string& path);

}  // namespace geodl::io
