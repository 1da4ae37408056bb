// The finished blocks of a classification, kept beside its outputs while it runs, so that a
// run stopped by anything (a kill -9, a lost rank, a time limit, a cancel in QGIS) can be
// resumed from them (classify's resume): each block of rows the ranks finish is written as a
// GeoTIFF of its own, then marked done; a resumed run computes only the blocks not marked.
//
//   .classes.tif.partial/job.json         what the run was (a resume must be the same run)
//   .classes.tif.partial/block-000012.tif  block 12's classes (rows [ys[12], ys[13]))
//   .classes.tif.partial/block-000012.json block 12 done: its rows, pixels per class id and
//                                           its files' sizes
//   .classes.tif.partial/block-000012.carry the blend below block 12 (each rank's last block)
//   .classes.tif.partial/block-000013.part-000040  the blend part way through block 13 (its
//                                           first 40 windows), until block 13 is marked
//   .probs.tif.partial/block-000012.tif    its probabilities, beside the probability output
//
// A block file without its marker is one being written when the run stopped; the next run
// removes it. With a .vrt output the blocks are the parts: the class journal becomes the
// parts folder when the run commits (io/parts_vrt.h); with a GeoTIFF the blocks' tiles are
// the output's, copied into it as they are (GeoTiffWriter::appendFile), and the journal goes
// once the output is in place.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/tiles.h"
#include "io/geotiff_writer.h"

namespace geodl::io {

// ".NAME.partial" beside `output` (or ".geodl-HASH.partial" where that name is too long).
std::string journalFolderOf(const std::string& output);
// "block-000012.tif"
std::string blockFileName(int block);

// Rows [y0, y0 + rows) of the raster `spec` describes: its grid moved down, never a COG.
GeoTiffSpec rowsSpec(GeoTiffSpec spec, int y0, int rows);

// A block marked done: its rows, its pixels per class id (256 entries; 255: nodata), and
// whether the blend's carry into the block below is kept (block-K.carry: each writer keeps
// its last one).
struct JournalBlock {
  int block = 0, y0 = 0, rows = 0;
  std::vector<int64_t> id_pixels;
  bool carry = false;
};

// A block not marked done whose parts (block-K.part-W: the blend part way through its windows)
// chain from column 0, so that a resume computes only its windows after `windows`: a block
// whose block before is finished (or the first), as each rank's block in flight is.
struct StartedBlock {
  int block = 0, windows = 0;
};

// The journal folders of one run: the classes', and the probabilities' (empty: none).
struct JournalFolders {
  std::string classes, probabilities;
  std::string classBlock(int block) const;        // the block's class file
  std::string probabilityBlock(int block) const;  // its probability file ("" without)
};

// The description of the run whose journal this is (job.json); empty when there is none
// (no journal, or one from before its description was written).
std::string journalDescription(const JournalFolders& folders);
// The blocks marked done whose files are all there, of the sizes their marks record, in block
// order; everything else in the folders (blocks being written when the run stopped, blocks
// whose files were cut short or replaced since, carries cut short, temporaries) is removed.
// `altered`, when given, gets the marked blocks whose files' sizes differ. `started`, when
// given, gets the blocks started after a finished block, whose parts are kept (without it, or
// for other blocks, the parts are removed).
std::vector<JournalBlock> finishedBlocks(const JournalFolders& folders, std::vector<int>* altered = nullptr,
                                         std::vector<StartedBlock>* started = nullptr);
// Block `block` removed from the journal (its mark, carry and files): a resume computes it.
void forgetBlock(const JournalFolders& folders, int block);
// Both folders made (empty; throws IoError) and the run's description written.
void startJournal(const JournalFolders& folders, const std::string& description);
// Both folders removed, with whatever they hold.
void removeJournal(const JournalFolders& folders);
// How many blocks the class journal marks done (their files not checked).
int64_t markedBlocks(const JournalFolders& folders);
// Whether the class journal holds any block marked done.
inline bool journalHasBlocks(const JournalFolders& folders) { return markedBlocks(folders) > 0; }
// The markers and the description removed, so that the class folder holds only its blocks
// (a .vrt's parts).
void dropJournalMarkers(const JournalFolders& folders);

// The blend's carry kept after `block`; throws IoError when it cannot be read whole.
BlendCarry readCarry(const JournalFolders& folders, int block);
// The parts of `block` that are whole, in order of their windows: their values too when asked
// (their headers only otherwise).
std::vector<BlockPart> readParts(const JournalFolders& folders, int block, bool values = true);

// Writes each block of rows it is given (the rows of one block: [ys[k], ys[k + 1])) into the
// journal, flushed to disk, then marks it done and calls `done` with it when given (rank 0
// appending it to a GeoTIFF output). Throws IoError naming the block's file.
class JournalSink final : public TileSink {
 public:
  JournalSink(JournalFolders folders, const GeoTiffSpec& classes, const GeoTiffSpec& probabilities,
              std::vector<int> ys, std::function<void(int block)> done = {});
  ProbabilityType probabilities() const override { return type_; }
  void writeRows(int y, int n, const uint8_t* ids, const void* probabilities) override;
  // Each block's carry is written beside it (block-K.carry) before the block is marked, and the
  // one before is removed once it is: a kill at any point leaves the newest marked block with
  // its carry, so that a resume does not compute the windows above its next block again.
  bool keepsCarry() const override { return true; }
  void carry(int block, const BlendCarry& state) override;
  // Three parts of each block, at a quarter, a half and three quarters of its windows (more on a
  // wide raster: kMostWindowsPerPart; each when the writing is idle then), each of the columns
  // changed since the one before (block-K.part-W), so that a stop loses at most the windows
  // since the newest, not the whole block; a block's parts are removed once it is marked.
  int partsPerBlock() const override { return 3; }
  void part(const BlockPart& state) override;
  // The parts a stopped run kept of a block this sink resumes (removed once it is marked).
  void adoptParts(const std::vector<BlockPart>& parts);
  // The time spent writing the journal's files (in the writing thread, beside the model).
  double writingSeconds() const { return seconds_; }

 private:
  JournalFolders folders_;
  GeoTiffSpec classes_, probabilities_;
  std::vector<int> ys_;
  std::function<void(int)> done_;
  ProbabilityType type_;
  double seconds_ = 0;
  int carry_written_ = -1;  // the newest carry written
  int carry_kept_ = -1;     // the carry of the newest marked block
  std::vector<std::string> parts_;  // the parts of the block being computed
};

}  // namespace geodl::io
