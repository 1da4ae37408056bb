// What classification reads windows from and writes finished rows to: a raster and its
// output files (io/raster_tiles.h), or memory in tests. Standard library only.
#pragma once

#include <cstdint>
#include <vector>

namespace geodl {

class TileSource {
 public:
  virtual ~TileSource() = default;
  virtual int width() const = 0;
  virtual int height() const = 0;
  virtual int bands() const = 0;
  // The window of window x window pixels at column x0, row y0, normalized, band by band
  // (bands x window x window), mirrored past the edges; valid: 1 where the pixel is inside
  // the raster and not nodata. Called from a reading thread, one call at a time.
  virtual void readWindow(int x0, int y0, int window, float* out, uint8_t* valid) const = 0;
};

enum class ProbabilityType { None, Byte, Float32 };

// What the blend of overlapping windows holds for the rows below a finished block, from the
// windows above them: rows [y, y + rows) of the raster's width, the weighted sums of each
// class's probabilities (classes x rows x width), the weights (rows x width) and where a valid
// pixel contributed (rows x width). Restored, a band starts at the block below without
// computing the windows above it again, to the same values (classify's resume).
struct BlendCarry {
  int y = 0, rows = 0, width = 0, classes = 0;
  std::vector<float> sums, weights;
  std::vector<uint8_t> valid;
};

class TileSink {
 public:
  virtual ~TileSink() = default;
  // What probabilities the sink wants with the classes.
  virtual ProbabilityType probabilities() const = 0;
  // n finished rows from row y: class ids (n x width, 255 for nodata) and, when wanted,
  // probabilities (classes x n x width: Byte 0-255 or Float32 0-1; 0 at nodata). Called
  // from a writing thread, one call at a time, rows in order, each row once.
  virtual void writeRows(int y, int n, const uint8_t* ids, const void* probabilities) = 0;
  // Whether the sink keeps the blend's carry after each block (carry()).
  virtual bool keepsCarry() const { return false; }
  // Before writeRows of block `block`: the blend's carry into the rows below it (none below the
  // last block), so that a sink can keep it before it marks the block done. Called from the
  // writing thread.
  virtual void carry(int /*block*/, const BlendCarry& /*state*/) {}
};

}  // namespace geodl
