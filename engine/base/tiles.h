// What classification reads windows from and writes finished rows to: a raster and its
// output files (io/raster_tiles.h), or memory in tests. Standard library only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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

// What the blend holds part way through block `block` (classify's resume): the first `windows`
// of its row's windows blended in (whole batches), over rows [y, y + rows) and columns [x0, x1)
// of the raster's width, laid out as a BlendCarry's. No later window of the row reaches the
// columns before `final_x`; the columns from x1 on hold only what the windows above gave them.
// Restored over the blend of the rows above, a band starts after those windows, to the same
// values.
struct BlockPart {
  int block = 0, windows = 0;
  int y = 0, rows = 0, width = 0, classes = 0;
  int x0 = 0, final_x = 0, x1 = 0;
  std::vector<float> sums, weights;  // classes x rows x (x1 - x0), rows x (x1 - x0)
  std::vector<uint8_t> valid;        // rows x (x1 - x0)
};

// How many of a block's parts, as a sink got them (in order of their windows), chain from
// column 0: the first starts there and each continues from the one before (its x0 the one
// before's final_x, its windows more). Their headers only are read.
size_t chainedParts(const std::vector<BlockPart>& parts);
// Those parts joined into one from column 0 (TileJob::start_part); nullopt when none chain.
std::optional<BlockPart> joinParts(const std::vector<BlockPart>& parts);

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
  // How many times a block's row of windows is kept part way (part()): 0, never.
  virtual int partsPerBlock() const { return 0; }
  // Part way through block `block`'s windows: the columns of the blend they changed since its
  // previous part (x0 is that part's final_x, 0 for the first). Called from the writing thread,
  // after the block before's writeRows and before this block's carry.
  virtual void part(const BlockPart& /*state*/) {}
};

}  // namespace geodl
