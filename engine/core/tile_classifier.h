// Classification by sliding windows between a tile source and a tile sink: windows are read
// two batches ahead in a thread, their class probabilities blended where they overlap, and
// each block of rows written (in another thread) as soon as no later window touches it, so
// memory depends on the window and the width, not the height.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "base/progress.h"
#include "core/tile_plan.h"
#include "base/tiles.h"

namespace geodl {

struct PixelRect {
  int x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // [x0, x1) x [y0, y1)
};

struct TileJob {
  TilePlan plan;
  std::vector<std::vector<int>> row_windows;  // per row of the plan: the window origins to compute
  int classes = 0;
  std::vector<uint8_t> class_ids;             // the output id of each class
  int batch_size = 4;
  PixelRect area;                             // only this part is classified
  RowBand band;                               // the rows written (a rank's share); all by default
  // Optional: 1 where rows [y, y + n) are inside the mask (n x width); elsewhere nodata.
  std::function<void(int y, int n, std::vector<uint8_t>& inside)> inside;
  // The next batch's probabilities computed before this one's are blended: always on a GPU
  // (the model runs while the CPU blends); on the CPU when asked (the same bytes, later).
  bool compute_ahead = false;
  // Resume: the blend's carry into the band's first block (band.first_row is then its first
  // block: the windows above are not computed again).
  const BlendCarry* start_carry = nullptr;
  // Resume: the blend part way through the band's first block, restored over the rows above
  // (from start_carry or computed): that block's first start_part->windows windows are not
  // computed again.
  const BlockPart* start_part = nullptr;
  // A part of a block is put off (to a later batch, or dropped) while the writing thread is
  // busy, so that it never holds up the model; with this, it waits for the writing thread
  // instead: the same parts at every run (tests).
  bool parts_wait = false;
};

struct TileResult {
  std::vector<int64_t> class_pixels;  // per class
  int64_t nodata_pixels = 0;
  int64_t windows_computed = 0;
};

// A part of a block (TileSink::part) spans at most this many of its row's windows: on a wide
// raster a row gets more parts than the sink asks for, so that a part's columns (and the copy
// of the blend it takes) stay bounded, e.g. 256 x 12 352 px for 256 px windows every 192.
constexpr int kMostWindowsPerPart = 64;

// Classifies the job's windows (those of its band's rows; only the band's blocks reach the
// sink, with the row numbers of the whole raster; a sink that keeps parts of blocks gets
// sink.partsPerBlock() of each row of windows, or one every kMostWindowsPerPart windows where
// that is more often, at whole batches, when its writing is idle (always with parts_wait)):
// `probabilities` maps a batch of normalized windows (N, bands, window, window) on `device` to
// class probabilities (N, classes, window, window).
// Throws InputError when the model's output has another shape, Cancelled when progress
// says so (the sink then has part of the rows: its owner discards them).
TileResult classifyTiles(const std::function<torch::Tensor(const torch::Tensor&)>& probabilities,
                         const TileSource& source, TileSink& sink, const TileJob& job,
                         const torch::Device& device, Progress& progress);

}  // namespace geodl
