// The GDAL side of classification's tile source and sink (core/tiles.h): windows read from
// a raster, normalized and mirrored past its edges; finished rows written to the class
// GeoTIFF and, when asked, the probability GeoTIFF.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/normalization.h"
#include "base/tiles.h"
#include "io/geotiff_writer.h"
#include "io/raster.h"

namespace geodl::io {

class RasterTileSource : public TileSource {
 public:
  // `reader` must outlive the source; mean and std are the model's, one per band.
  RasterTileSource(const RasterReader& reader, const std::vector<double>& mean, const std::vector<double>& stddev);
  int width() const override { return reader_.info().width; }
  int height() const override { return reader_.info().height; }
  int bands() const override { return reader_.info().bands; }
  void readWindow(int x0, int y0, int window, float* out, uint8_t* valid) const override;

 private:
  const RasterReader& reader_;
  BandNormalization normalize_;
  mutable std::vector<double> values_;
  mutable std::vector<uint8_t> valid_;
};

// One block of rows [y0, y0 + rows) of a raster, in files written as the sink writes them (a
// GeoTiffTileSink on those rows alone): a block classify's journal keeps (io/block_journal.h).
struct RowBandFiles {
  std::string classes, probabilities;  // probabilities: empty when the job writes none
  int y0 = 0, rows = 0;
};

class GeoTiffTileSink : public TileSink {
 public:
  // The class raster, and the probability raster when `probabilities` is not empty; both
  // opened now (an unwritable path fails before any work) under temporary names.
  GeoTiffTileSink(const std::string& classes, const GeoTiffSpec& class_spec, const std::string& probabilities,
                  const GeoTiffSpec& probability_spec);
  ProbabilityType probabilities() const override;
  void writeRows(int y, int n, const uint8_t* ids, const void* probabilities) override;
  // A block of rows, next in order, from files a sink on those rows alone wrote (RowBandFiles):
  // their tiles copied as they are where they are the outputs' (GeoTiffWriter::appendFile).
  // Throws RasterReadError naming a file that does not read or is not such a block.
  void appendBlock(const RowBandFiles& block);
  // Completes both under their temporary names (see GeoTiffWriter::finish).
  void finish();
  // The finished class raster, readable before it is committed.
  const std::string& finishedClasses() const { return classes_.finishedPath(); }
  // The finished probability raster (empty without one).
  std::string finishedProbabilities() const { return probabilities_ ? probabilities_->finishedPath() : ""; }
  // Renames both into place; without it, destruction leaves nothing.
  void commit();

 private:
  GeoTiffWriter classes_;
  std::unique_ptr<GeoTiffWriter> probabilities_;
  bool float32_ = false;
};

}  // namespace geodl::io
