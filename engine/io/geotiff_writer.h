// GeoTIFF output written row by row: tiled, compressed, BigTIFF when needed, under a
// temporary name renamed (or converted to a Cloud Optimized GeoTIFF) when complete. GDAL
// makes the file (its grid, CRS, nodata, colours and names) with no tile in it; libtiff then
// writes the tiles, so that those of a file written for the same rows are copied as they are
// (appendFile: a classification's finished blocks assembled without decoding them).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace geodl::io {

struct GeoTiffSpec {
  int width = 0, height = 0, bands = 1;
  bool float32 = false;  // Float32 pixels; otherwise Byte
  std::array<double, 6> geotransform{0, 1, 0, 0, 0, 1};
  std::string crs_wkt;   // empty: no CRS
  bool has_nodata = false;
  double nodata = 0;
  std::vector<std::string> band_names;  // descriptions, one per band (optional)
  // Band 1 of a Byte raster: colours ("#rrggbb") and category names by pixel value.
  std::vector<std::string> colours, categories;
  bool cog = false;      // Cloud Optimized GeoTIFF (with overviews) instead of a plain tiled one
  // The tiles' height (a multiple of 16; they are 256 wide): classify's GeoTIFF outputs take
  // one that divides their blocks of rows (blockAlignedTileRows), so that a block's tiles
  // are the output's.
  int tile_rows = 256;
};

// Band 1's colour table, as the writers give it (GeoTIFF and VRT alike): entry v is
// spec.colours[v] ("#rrggbb", opaque) up to the last colour given, the others transparent
// black; empty when no colour is given.
std::vector<std::array<uint8_t, 4>> colourTable(const GeoTiffSpec& spec);

class GeoTiffWriter {
 public:
  // Throws IoError (with the fix) when the file cannot be created.
  GeoTiffWriter(const std::string& path, const GeoTiffSpec& spec);
  // Without commit(): the temporary file is removed, nothing is left.
  ~GeoTiffWriter();
  GeoTiffWriter(const GeoTiffWriter&) = delete;
  GeoTiffWriter& operator=(const GeoTiffWriter&) = delete;

  // Rows [y, y + rows) of every band, band after band (bands x rows x width), in order from
  // row 0. They reach the file a row of tiles at a time (each tile compressed and written
  // once, in order: the file's bytes do not depend on how the rows came).
  void writeRows(int y, int rows, const uint8_t* values);
  void writeRows(int y, int rows, const float* values);
  // Rows [y, y + rows), next in order, from `file`: a GeoTIFF a GeoTiffWriter wrote with the
  // spec of those rows (rowsSpec of this one's). Its rows of tiles that are rows of this file's
  // tiles (the same rows: y a multiple of the tile height, whole tiles or the raster's last
  // rows) are copied as they are, compressed; the others are decoded and written as by
  // writeRows. The file's bytes are those writeRows would give. Throws RasterReadError naming
  // `file` when it does not read or is not such a file, and IoError when writing fails.
  void appendFile(const std::string& file, int y, int rows);
  // Completes the file under its temporary name (the last blocks, the Cloud Optimized copy,
  // the sidecar), flushed to disk; commit() then only renames. Throws IoError naming the
  // file ("no space left on the device" when that is why).
  void finish();
  // The finished file, for reading it before it is committed (polygons).
  const std::string& finishedPath() const;
  // Finishes when needed, then moves the file (and its .aux.xml) into place.
  void commit();
  const std::string& path() const { return path_; }

  struct Impl;  // the dataset and the rows of the tile row being filled

 private:
  std::unique_ptr<Impl> impl_;
  std::string path_;
};

}  // namespace geodl::io
