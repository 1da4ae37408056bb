#include "io/raster_tiles.h"

#include <algorithm>
#include <cstdlib>

#include "io/gdal_util.h"

namespace geodl::io {

namespace {

// Mirror index into [0, n) (reflection without repeating the edge pixel).
int reflect(int v, int n) {
  if (n == 1) return 0;
  const int period = 2 * n - 2;
  v = std::abs(v) % period;
  return v >= n ? period - v : v;
}

}  // namespace

RasterTileSource::RasterTileSource(const RasterReader& reader, const std::vector<double>& mean,
                                   const std::vector<double>& stddev)
    : reader_(reader), normalize_(mean, stddev) {}

void RasterTileSource::readWindow(int x0, int y0, int window, float* out, uint8_t* mask) const {
  const int width = reader_.info().width, height = reader_.info().height, bands = reader_.info().bands;
  // The pixels the window needs: read their bounding box once.
  int sx0 = width, sx1 = 0, sy0 = height, sy1 = 0;
  for (int d = 0; d < window; ++d) {
    sx0 = std::min(sx0, reflect(x0 + d, width));
    sx1 = std::max(sx1, reflect(x0 + d, width) + 1);
    sy0 = std::min(sy0, reflect(y0 + d, height));
    sy1 = std::max(sy1, reflect(y0 + d, height) + 1);
  }
  const int rw = sx1 - sx0;
  reader_.read(sx0, sy0, rw, sy1 - sy0, values_, valid_);
  for (int r = 0; r < window; ++r) {
    const int sy = reflect(y0 + r, height) - sy0;
    for (int c = 0; c < window; ++c) {
      const int sx = reflect(x0 + c, width) - sx0;
      const size_t src = size_t(sy) * rw + sx;
      const bool ok = valid_[src] != 0;
      mask[r * window + c] = ok;
      for (int b = 0; b < bands; ++b)
        out[(size_t(b) * window + r) * window + c] = ok ? normalize_(float(values_[src * bands + b]), b) : 0.0f;
    }
  }
}

GeoTiffTileSink::GeoTiffTileSink(const std::string& classes, const GeoTiffSpec& class_spec,
                                 const std::string& probabilities, const GeoTiffSpec& probability_spec)
    : classes_(classes, class_spec), float32_(probability_spec.float32) {
  if (!probabilities.empty()) probabilities_ = std::make_unique<GeoTiffWriter>(probabilities, probability_spec);
}

ProbabilityType GeoTiffTileSink::probabilities() const {
  if (!probabilities_) return ProbabilityType::None;
  return float32_ ? ProbabilityType::Float32 : ProbabilityType::Byte;
}

void GeoTiffTileSink::writeRows(int y, int n, const uint8_t* ids, const void* probabilities) {
  classes_.writeRows(y, n, ids);
  if (!probabilities_) return;
  if (float32_)
    probabilities_->writeRows(y, n, static_cast<const float*>(probabilities));
  else
    probabilities_->writeRows(y, n, static_cast<const uint8_t*>(probabilities));
}

void GeoTiffTileSink::finish() {
  classes_.finish();
  if (probabilities_) probabilities_->finish();
}

void GeoTiffTileSink::commit() {
  classes_.commit();
  if (probabilities_) probabilities_->commit();
}

void GeoTiffTileSink::appendBlock(const RowBandFiles& block) {
  classes_.appendFile(block.classes, block.y0, block.rows);
  if (probabilities_) probabilities_->appendFile(block.probabilities, block.y0, block.rows);
}

}  // namespace geodl::io
