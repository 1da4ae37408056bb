#include "app/classify.h"
#include "app/classify_stages.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/data_parallel.h"
#include "base/atomic_file.h"
#include "base/file_identity.h"
#include "base/file_kind.h"
#include "base/hard_stop.h"
#include "base/metadata.h"
#include "core/device.h"
#include "base/errors.h"
#include "core/memory.h"
#include "model/model_file.h"
#include "core/tile_classifier.h"
#include "core/tile_plan.h"
#include "io/geotiff_writer.h"
#include "io/parts_vrt.h"
#include "io/labels.h"
#include "io/polygonize.h"
#include "io/raster.h"
#include "io/raster_tiles.h"
#include "io/resampled.h"

namespace geodl {

// Softmax probabilities of a batch, averaged over the 8 flips and quarter turns with TTA;
// `type`: the weights' (kBFloat16 for bf16).
torch::Tensor predict(const Predictor& model, const torch::Tensor& x, bool tta, torch::ScalarType type) {
  // bfloat16 weights take bfloat16 inputs; the softmax is computed in float.
  const auto logits = [&](const torch::Tensor& t) {
    return type == torch::kFloat ? model.forward(t) : model.forward(t.to(type)).to(torch::kFloat);
  };
  if (!tta) return torch::softmax(logits(x), 1);
  torch::Tensor sum;
  for (int flip = 0; flip < 2; ++flip)
    for (int k = 0; k < 4; ++k) {
      torch::Tensor t = flip ? x.flip({3}) : x;
      t = torch::rot90(t, k, {2, 3});
      torch::Tensor p = torch::rot90(torch::softmax(logits(t), 1), -k, {2, 3});
      if (flip) p = p.flip({3});
      sum = sum.defined() ? sum + p : p;
    }
  return sum / 8.0;
}

namespace {



// The class raster: the input's grid, nodata 255, the model's colours and class names.
io::GeoTiffSpec classSpec(const io::RasterInfo& ri, const ModelInfo& info, bool cog) {
  io::GeoTiffSpec spec;
  spec.width = ri.width;
  spec.height = ri.height;
  spec.geotransform = ri.geotransform;
  spec.crs_wkt = ri.crs_wkt;
  spec.has_nodata = true;
  spec.nodata = 255;
  spec.cog = cog;
  int max_id = 0;
  for (const auto& c : info.classes) max_id = std::max(max_id, c.id);
  spec.colours.assign(size_t(max_id + 1), "");
  spec.categories.assign(size_t(max_id + 1), "");
  for (const auto& c : info.classes) {
    spec.colours[size_t(c.id)] = c.colour;
    spec.categories[size_t(c.id)] = c.name;
  }
  spec.band_names = {"class"};
  return spec;
}

// The probability raster: one band per class, named after it.
io::GeoTiffSpec probabilitySpec(const io::GeoTiffSpec& classes, const ModelInfo& info, bool float32) {
  io::GeoTiffSpec p = classes;
  p.bands = info.spec.classes;
  p.float32 = float32;
  p.has_nodata = false;
  p.colours.clear();
  p.categories.clear();
  p.band_names.clear();
  for (const auto& c : info.classes) p.band_names.push_back(c.name);
  return p;
}

// An output at the grid of the resampled view (classify's resample).
std::string viewOutput(const std::string& output) { return output.empty() ? "" : output + ".model-grid"; }

// What every rank must agree on before sharing a raster.
std::string runDescription(const ClassifyOptions& o, const io::RasterInfo& ri, const TileJob& job) {
  std::error_code ignored;
  nlohmann::json d = {{"engine_version", metadata::kVersion},
                      {"input", o.input},
                      {"raster", std::to_string(ri.width) + " x " + std::to_string(ri.height)},
                      {"model", o.model_path},
                      {"model_size", int64_t(std::filesystem::file_size(o.model_path, ignored))},
                      {"output", o.output},
                      {"probabilities", o.probabilities},
                      {"probabilities_float", o.probabilities_float},
                      {"polygons", o.polygons},
                      {"window", job.plan.window},
                      {"overlap", job.plan.overlap},
                      {"batch_size", job.batch_size},
                      {"tta", o.tta},
                      {"precision", o.run.precision},
                      {"extent", std::vector<double>(o.extent, o.extent + 4)},
                      {"mask", o.mask},
                      {"cog", o.cog}};
  return d.dump();
}

int64_t windowsOf(const TileJob& job, int first_row, int end_row) {
  int64_t n = 0;
  for (int k = first_row; k < end_row; ++k) n += int64_t(job.row_windows[size_t(k)].size());
  return n;
}

// The windows of each row of the plan, for splitRows (less those a stopped run kept in parts
// of its started blocks, `started`: none when empty).
std::vector<int64_t> windowsPerRow(const TileJob& job, const std::vector<int>& started = {}) {
  std::vector<int64_t> counts;
  for (const auto& xs : job.row_windows) counts.push_back(int64_t(xs.size()));
  for (size_t k = 0; k < started.size(); ++k) counts[k] -= started[k];
  return counts;
}

// " in 1.23 s": the seconds since `start`, for the log.
std::string inSeconds(std::chrono::steady_clock::time_point start, int digits) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(digits) << " in "
       << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s";
  return text.str();
}

// What a run counted, summed over the ranks.
struct RunCounts {
  std::vector<int64_t> class_pixels;  // per model class
  int64_t nodata_pixels = 0;
  int64_t windows = 0;      // computed, each once (a band's own blocks)
  int64_t non_finite = 0;   // NaN or infinite pixels read that the raster does not declare nodata
  int64_t journal_blocks = 0, journal_us = 0;  // written into the journal by this run, and the time

  void sumOver(DataParallel& ranks) {
    std::vector<int64_t> all = class_pixels;
    all.insert(all.end(), {nodata_pixels, windows, non_finite, journal_blocks, journal_us});
    ranks.sum(all);
    const size_t n = class_pixels.size();
    class_pixels.assign(all.begin(), all.begin() + long(n));
    nodata_pixels = all[n];
    windows = all[n + 1];
    non_finite = all[n + 2];
    journal_blocks = all[n + 3];
    journal_us = all[n + 4];
  }
};

// Stage 2: the same plan on every rank (the smallest window and batch any rank measured),
// logged.
void agreeOnPlan(const ClassifyOptions& o, DataParallel& ranks, RunPlan& run, Progress& progress) {
  TileJob& job = run.job;
  if (o.window == 0) {
    const int window = int(ranks.minimum(job.plan.window));
    if (window != job.plan.window) planWindows(o, window, run);
  }
  job.batch_size = int(ranks.minimum(job.batch_size));
  if (ranks.writes()) {
    const int64_t planned = windowsOf(job, 0, int(job.row_windows.size()));
    std::ostringstream line;
    line << planned << " windows of " << job.plan.window << " px overlapping by " << job.plan.overlap << " px: "
         << std::fixed << std::setprecision(2) << computedRatio(job, planned) << " pixels computed per output pixel";
    progress.log(line.str());
  }
  ranks.checkSameRun(runDescription(o, run.reader->info(), job), "classify another job");
}

// Rank 0: the run's journal goes when nothing in it is worth resuming (no finished block),
// and stays otherwise (a failure, a cancel), for resume; a committed run has none.
struct JournalScope {
  io::JournalFolders folders;
  bool open = false;
  JournalScope() = default;
  JournalScope(const JournalScope&) = delete;
  JournalScope& operator=(const JournalScope&) = delete;
  ~JournalScope() {
    if (open && !io::journalHasBlocks(folders)) io::removeJournal(folders);
  }
};

// The outputs of a run. Every rank writes the blocks it computes into the run's journal
// (io/block_journal.h), where a stopped run resumes from. With a GeoTIFF, rank 0 appends each
// block to the outputs once it is in the journal (its tiles copied as they are), with the
// finished blocks before it, and the others' blocks at the end; with a .vrt, the journal's
// blocks are the parts, moved into place.
struct RunOutputs {
  io::GeoTiffSpec spec, probability_spec;
  std::unique_ptr<io::GeoTiffTileSink> sink;  // rank 0, GeoTIFF (at the view's grid when resampled)
  std::unique_ptr<io::GeoTiffTileSink> grid;  // resampled: the outputs at the raster's grid
  int sink_next = 0;                          // the next block the sink expects
  io::JournalFolders journal;                 // every rank's
  JournalScope kept;                          // rank 0's
  std::vector<io::JournalBlock> resumed;      // rank 0: the blocks the stopped run finished
  std::vector<RowBand> ranges;                // this rank's blocks to compute, in runs
  std::vector<bool> carried;                  // finished blocks whose blend carry is kept
  std::vector<int> started;                   // per block: its windows the stopped run kept in parts
  std::vector<RowBand> bands;                 // .vrt with ranks: the bands each rank polygonizes
  int64_t job_windows = 0;                    // computed by all ranks
  bool in_parts = false;                      // a .vrt output
  std::unique_ptr<io::PartsOutput> class_parts, probability_parts;  // rank 0's
  // With ranks and polygons: this rank's band polygonized (a temporary rank 0 reads; it goes
  // when the job ends).
  std::optional<AtomicOutput> part_polygons;

  // The windows a range computes: those of its rows, less those kept in its first block's parts.
  int64_t windowsLeft(const TileJob& job, const RowBand& r) const {
    return windowsOf(job, r.first_row, r.end(job.plan)) - started[size_t(r.first_block)];
  }
  int blockRows(const TilePlan& plan, int block) const {
    return (block + 1 < int(plan.ys.size()) ? plan.ys[size_t(block) + 1] : plan.height) - plan.ys[size_t(block)];
  }
  std::vector<io::VrtPart> parts(const TilePlan& plan, const std::string& folder, int first, int end) const {
    std::vector<io::VrtPart> p;
    for (int k = first; k < end; ++k)
      p.push_back({(std::filesystem::path(folder) / io::blockFileName(k)).string(), plan.ys[size_t(k)],
                   blockRows(plan, k)});
    return p;
  }
};

// The runs of blocks left to compute, shared by the ranks: bands balanced by the windows left
// (splitRows: the finished blocks cost nothing, the rows computed again count), each cut where
// a finished block lies. Without finished blocks, one band each. A run after a finished block
// whose blend carry is kept (`carried`) starts at its first block: the windows above are not
// computed again.
std::vector<std::vector<RowBand>> rangesLeft(const TileJob& job, const std::vector<bool>& done,
                                             const std::vector<bool>& carried, const std::vector<int>& started,
                                             int ranks) {
  const TilePlan& plan = job.plan;
  std::vector<std::vector<RowBand>> all;
  for (const RowBand& band : splitRows(plan, windowsPerRow(job, started), ranks, done, carried)) {
    std::vector<RowBand> runs;
    for (int k = band.first_block, end = band.end(plan); k < end;) {
      if (done[size_t(k)]) {
        ++k;
        continue;
      }
      RowBand r;
      r.first_block = k;
      while (k < end && !done[size_t(k)]) ++k;
      r.end_block = k;
      const bool after_carry = r.first_block > 0 && done[size_t(r.first_block) - 1] && carried[size_t(r.first_block) - 1];
      r.first_row = after_carry ? r.first_block : firstContributingRow(plan, r.first_block);
      runs.push_back(r);
    }
    all.push_back(runs);
  }
  return all;
}

// Stage 3: the outputs opened, so that an unwritable path fails before any work; the journal
// started or resumed (rank 0), and every rank's blocks to compute.
void openOutputs(const ClassifyOptions& given, const ClassifyOptions& o, DataParallel& ranks, const RunPlan& run,
                 RunOutputs& out, Progress& progress) {
  const TileJob& job = run.job;
  out.in_parts = io::isVrtPath(o.output);  // planRun refuses it resampled
  out.spec = classSpec(run.reader->info(), run.predictor.info, o.cog && !run.view);
  // A GeoTIFF's tiles are those of its blocks in the journal, copied into it as they are.
  if (!out.in_parts) out.spec.tile_rows = blockAlignedTileRows(job.plan);
  out.probability_spec = probabilitySpec(out.spec, run.predictor.info, o.probabilities_float);
  nlohmann::json shared;
  if (ranks.writes()) {
    if (!out.in_parts) {
      // Resampled, the windows' outputs are at the view's grid, beside the outputs, never
      // committed: the outputs at the raster's grid are made from them (finishOutputs).
      out.sink = std::make_unique<io::GeoTiffTileSink>(run.view ? viewOutput(o.output) : o.output, out.spec,
                                                       run.view ? viewOutput(o.probabilities) : o.probabilities,
                                                       out.probability_spec);
      if (run.view) {
        const io::GeoTiffSpec grid = classSpec(run.input->info(), run.predictor.info, o.cog);
        out.grid = std::make_unique<io::GeoTiffTileSink>(o.output, grid, o.probabilities,
                                                         probabilitySpec(grid, run.predictor.info,
                                                                         o.probabilities_float));
      }
    }
    out.kept.folders = {io::journalFolderOf(o.output),
                        o.probabilities.empty() ? "" : io::journalFolderOf(o.probabilities)};
    std::vector<io::StartedBlock> started;
    out.resumed = openJournal(given, run, out.kept.folders, progress, started);
    out.kept.open = true;
    if (out.in_parts) {
      out.class_parts = std::make_unique<io::PartsOutput>(o.output, out.spec, out.kept.folders.classes);
      if (!o.probabilities.empty())
        out.probability_parts =
            std::make_unique<io::PartsOutput>(o.probabilities, out.probability_spec, out.kept.folders.probabilities);
    }
    std::vector<int> done, carried;
    for (const auto& b : out.resumed) {
      done.push_back(b.block);
      if (b.carry) carried.push_back(b.block);
    }
    nlohmann::json parts = nlohmann::json::array();
    for (const auto& b : started) parts.push_back({b.block, b.windows});
    shared = {{"classes", out.kept.folders.classes}, {"probabilities", out.kept.folders.probabilities},
              {"done", done}, {"carried", carried}, {"started", parts}};
  }
  const auto from_rank0 = nlohmann::json::parse(ranks.gatherText(shared.dump()).front());
  out.journal = {from_rank0.at("classes"), from_rank0.at("probabilities")};
  std::vector<bool> done(job.plan.ys.size(), false), carried(job.plan.ys.size(), false);
  for (int k : from_rank0.at("done")) done.at(size_t(k)) = true;
  for (int k : from_rank0.at("carried")) carried.at(size_t(k)) = true;
  out.started.assign(job.plan.ys.size(), 0);
  for (const auto& b : from_rank0.at("started")) out.started.at(b.at(0).get<size_t>()) = b.at(1).get<int>();
  const int parts = ranks.active() ? ranks.size() : 1;
  const auto all = rangesLeft(job, done, carried, out.started, parts);
  out.carried = carried;
  for (const auto& runs : all)
    for (const RowBand& r : runs) out.job_windows += out.windowsLeft(job, r);
  out.ranges = all[size_t(ranks.active() ? ranks.rank() : 0)];
  if (out.in_parts && ranks.active()) out.bands = splitRows(job.plan, windowsPerRow(job), parts);
}

// Rank 0, GeoTIFF: the journal's blocks from the sink's next up to `end` appended to the
// outputs (their tiles copied as they are: GeoTiffTileSink::appendBlock), calling `step`
// after each. A block that does not read (a damaged file) is dropped from the journal, so
// that the resume the run's failure advises computes it again.
void appendFromJournal(const TileJob& job, RunOutputs& out, int end, const std::function<void()>& step = {}) {
  for (; out.sink_next < end; ++out.sink_next) {
    const int k = out.sink_next;
    try {
      out.sink->appendBlock({out.journal.classBlock(k), out.journal.probabilityBlock(k), job.plan.ys[size_t(k)],
                             out.blockRows(job.plan, k)});
    } catch (const RasterReadError& e) {
      io::forgetBlock(out.journal, k);
      throw IoError("the finished block " + std::to_string(k) + " in the journal does not read (" + e.what() +
                    "): it is dropped from the journal, and a resume computes it again");
    }
    if (step) step();
  }
}

// Stage 4: this rank's blocks computed into the journal (and, with a GeoTIFF, rank 0's appended
// to the outputs); the counts of all ranks, those of the stopped run's blocks included.
RunCounts computeBand(const ClassifyOptions& o, DataParallel& ranks, RunPlan& run, RunOutputs& out,
                      Progress& progress) {
  TileJob& job = run.job;
  RunCounts counts;
  counts.class_pixels.assign(size_t(job.classes), 0);
  int64_t mine = 0;
  for (const RowBand& r : out.ranges) mine += out.windowsLeft(job, r);
  RankProgress shared(progress, ranks, "windows:" + o.output, out.job_windows, mine);
  // Rank 0, GeoTIFF: each block appended to the outputs once it is in the journal, in the
  // writing thread, with the finished blocks before it (the stopped run's, copied as they are
  // when the first block left is done).
  int copied = 0;
  double copy_seconds = 0;
  const auto append = [&](int block) {
    if (block < out.sink_next) return;
    const auto start = std::chrono::steady_clock::now();
    copied += block - out.sink_next;
    appendFromJournal(job, out, block);
    copy_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    appendFromJournal(job, out, block + 1);
  };
  const io::RasterTileSource source(*run.reader, run.predictor.info.band_mean, run.predictor.info.band_std);
  int64_t at = 0;
  for (const RowBand& range : out.ranges) {
    const hard_stop::LoopScope loop;  // stops by itself at its next batch
    job.band = range;
    const int end = range.end(job.plan);
    // After a finished block whose blend is kept, the band starts from it (the windows above
    // are not computed again).
    std::optional<BlendCarry> carry;
    if (range.first_block > 0 && out.carried[size_t(range.first_block) - 1])
      carry = io::readCarry(out.journal, range.first_block - 1);
    job.start_carry = carry ? &*carry : nullptr;
    io::JournalSink sink(out.journal, out.spec, out.probability_spec, job.plan.ys,
                         out.sink ? std::function<void(int)>(append) : nullptr);
    // A block the stopped run had started: from the windows its parts kept.
    std::optional<BlockPart> started;
    if (out.started[size_t(range.first_block)] > 0) {
      const std::vector<BlockPart> parts = io::readParts(out.journal, range.first_block);
      started = joinParts(parts);
      sink.adoptParts(parts);
    }
    job.start_part = started ? &*started : nullptr;
    const int64_t windows = out.windowsLeft(job, range);
    SubProgress part(shared, double(at) / double(std::max<int64_t>(1, mine)),
                     double(at + windows) / double(std::max<int64_t>(1, mine)));
    at += windows;
    const TileResult tiles =
        classifyTiles([&](const torch::Tensor& x) { return predict(run.predictor, x, o.tta, run.type); }, source, sink,
                      job, torch::Device(run.device_name), part);
    for (size_t k = 0; k < counts.class_pixels.size(); ++k) counts.class_pixels[k] += tiles.class_pixels[k];
    counts.nodata_pixels += tiles.nodata_pixels;
    counts.windows += windowsOf(job, range.first_block, end);  // the rows before are another block's
    counts.journal_us += int64_t(sink.writingSeconds() * 1e6);
    counts.journal_blocks += end - range.first_block;
  }
  job.band = RowBand{};
  job.start_carry = nullptr;
  job.start_part = nullptr;
  if (copied > 0) {
    std::ostringstream line;
    line << "copied the " << copied << (copied == 1 ? " block" : " blocks")
         << " finished before the stop into the outputs in " << std::fixed << std::setprecision(2) << copy_seconds
         << " s";
    progress.log(line.str());
  }
  for (const io::JournalBlock& b : out.resumed) {  // rank 0 alone has them
    for (size_t k = 0; k < job.class_ids.size(); ++k) counts.class_pixels[k] += b.id_pixels[job.class_ids[k]];
    counts.nodata_pixels += b.id_pixels[255];
    counts.windows += windowsOf(job, b.block, b.block + 1);
  }
  shared.checkCancelled();
  counts.non_finite = run.reader->undeclaredNonFinitePixels();
  ranks.awaitAll("classified:" + o.output, [&] { shared.showJob(); });
  counts.sumOver(ranks);
  if (ranks.writes()) {
    std::ostringstream line;  // what keeping the blocks for resume cost (beside the model)
    line << "journal for resume: " << counts.journal_blocks << (counts.journal_blocks == 1 ? " block" : " blocks")
         << " written in " << std::fixed << std::setprecision(2) << double(counts.journal_us) / 1e6
         << " s, summed over the ranks";
    progress.log(line.str());
  }
  return counts;
}

// Resampled: rank 0 brings the outputs at the view's grid to the raster's (finished, not yet
// committed), and every rank counts the pixels of those.
void toRasterGrid(const RunPlan& run, RunOutputs& out, RunCounts& counts, DataParallel& ranks, Progress& progress) {
  std::vector<int64_t> ids(256, 0);
  if (ranks.writes()) {
    const hard_stop::LoopScope loop;
    const int height = run.input->info().height;
    progress.report(1.0, "resampling the outputs to the raster's grid");
    ids = io::copyToGrid(out.sink->finishedClasses(), out.sink->finishedProbabilities(), *run.input, *out.grid,
                         [&](int rows) {
                           progress.report(1.0, "resampling the outputs to the raster's grid: " +
                                                    std::to_string(rows * 100 / height) + "%");
                           progress.checkCancelled();
                         })
              .id_pixels;
    out.grid->finish();
  }
  ranks.sum(ids);
  for (size_t k = 0; k < run.job.class_ids.size(); ++k) counts.class_pixels[k] = ids[run.job.class_ids[k]];
  counts.nodata_pixels = ids[255];
}

// .vrt with ranks and polygons: each rank polygonizes its band of the finished blocks (the
// band splitRows gives it, whoever computed its blocks), for rank 0 to merge along the bands'
// borders. Returns every rank's file ("": a rank without a band).
std::vector<std::string> polygonizeBands(const ClassifyOptions& o, DataParallel& ranks, const TileJob& job,
                                         RunOutputs& out) {
  const RowBand& band = out.bands[size_t(ranks.rank())];
  if (!band.empty(job.plan)) {
    const hard_stop::LoopScope loop;
    const int y0 = band.y0(job.plan);
    std::vector<io::VrtPart> parts = out.parts(job.plan, out.journal.classes, band.first_block, band.end(job.plan));
    for (auto& p : parts) p.y0 -= y0;
    const io::MemoryVrt view(parts, io::rowsSpec(out.spec, y0, band.y1(job.plan) - y0));
    out.part_polygons.emplace(o.polygons + ".part-" + std::to_string(ranks.rank()), ".gpkg");
    io::polygonizePart(view.path(), out.part_polygons->temporary());
  }
  return ranks.gatherText(out.part_polygons ? out.part_polygons->temporary() : "");
}

// Stage 5: rank 0 appends the blocks it has not yet to the outputs (the other ranks'), makes the polygons from the finished class raster, then moves every output
// into place together, so that a failure (a full disk) leaves the previous outputs as they
// were; the journal then goes. Returns the polygons' counts.
std::pair<int64_t, int64_t> finishOutputs(const ClassifyOptions& o, DataParallel& ranks, const RunPlan& run,
                                          RunOutputs& out, RunCounts& counts, Progress& progress) {
  const TileJob& job = run.job;
  const int blocks = int(job.plan.ys.size());
  std::pair<int64_t, int64_t> polygon_counts{0, 0};
  if (out.sink) {
    const hard_stop::LoopScope loop;
    const auto start = std::chrono::steady_clock::now();
    progress.report(1.0, "assembling the blocks");
    const bool copies = out.sink_next < blocks;
    appendFromJournal(job, out, blocks, [&] { progress.checkCancelled(); });
    out.sink->finish();
    if (copies && ranks.active())
      progress.log("assembled the bands of " + std::to_string(ranks.size()) + " ranks" + inSeconds(start, 2));
  }
  if (run.view) toRasterGrid(run, out, counts, ranks, progress);
  io::GeoTiffTileSink* finished = out.grid ? out.grid.get() : out.sink.get();
  std::optional<AtomicOutput> polygons;
  std::vector<std::string> part_polygons;  // every rank's (empty: a rank without a band)
  if (!o.polygons.empty() && out.in_parts && ranks.active()) part_polygons = polygonizeBands(o, ranks, job, out);
  if (!o.polygons.empty() && ranks.writes()) {
    progress.report(1.0, "polygons");
    polygons.emplace(o.polygons, ".gpkg");
    io::PolygonizeResult p;
    if (!part_polygons.empty()) {
      // The ranks polygonized their bands: merged along the bands' borders.
      std::vector<std::string> files;
      std::vector<double> borders;
      const auto& gt = out.spec.geotransform;
      for (size_t r = 0; r < part_polygons.size(); ++r) {
        if (part_polygons[r].empty()) continue;
        if (!files.empty()) borders.push_back(gt[3] + out.bands[r].y0(job.plan) * gt[5]);
        files.push_back(part_polygons[r]);
      }
      const auto start = std::chrono::steady_clock::now();
      p = io::mergePartPolygons(files, borders, std::abs(gt[5]) * 1e-3, *polygons, out.spec.categories, o.min_area);
      progress.log("merged the polygons of " + std::to_string(files.size()) + " parts along their borders" +
                   inSeconds(start, 2));
    } else if (out.in_parts) {
      const io::MemoryVrt view(out.parts(job.plan, out.journal.classes, 0, blocks), out.spec);
      p = io::polygonizeClasses(view.path(), *polygons, out.spec.categories, o.min_area);
    } else {
      p = io::polygonizeClasses(finished->finishedClasses(), *polygons, out.spec.categories, o.min_area);
    }
    polygon_counts = {p.polygons, p.dropped};
  }
  if (ranks.writes()) {
    progress.checkCancelled();
    const auto start = std::chrono::steady_clock::now();
    const hard_stop::CommitScope moving;  // all the outputs or none
    if (out.in_parts) {
      io::dropJournalMarkers(out.journal);
      out.kept.open = false;  // the journal's blocks are the parts now
      out.class_parts->commit(out.parts(job.plan, out.journal.classes, 0, blocks));
      if (out.probability_parts)
        out.probability_parts->commit(out.parts(job.plan, out.journal.probabilities, 0, blocks));
      progress.log("wrote the VRT over the parts of " + std::to_string(blocks) + (blocks == 1 ? " block" : " blocks") +
                   inSeconds(start, 3));
    } else {
      finished->commit();
    }
    if (polygons) polygons->commit();
    io::removeJournal(out.journal);
    out.kept.open = false;
  }
  ranks.awaitAll("written:" + o.output);
  return polygon_counts;
}

}  // namespace

ClassifyResult classifyShared(const ClassifyOptions& given, DataParallel& ranks, Progress& progress) {
  // Reused blocks for the batches of windows, within half again the batch's peak: the
  // sizes vary within a forward pass, and an eighth re-faulted 4 GiB a minute (10% slower).
  CpuMemoryScope memory(0.5);
  torch::NoGradGuard no_grad;
  const ClassifyOptions o = withStoppedPlan(given);
  RunPlan run;
  planRun(o, ranks, progress, run);    // 1. checks, model, raster, plan
  agreeOnPlan(o, ranks, run, progress);  // 2. one plan for all ranks
  RunOutputs out;
  RunCounts counts;
  ClassifyResult result;
  // Stopped from here on, the blocks finished are kept for resume, and the message says so.
  const auto stopped = [&](const std::string& what) {
    return out.kept.open && io::journalHasBlocks(out.kept.folders) ? what + "; " + resumeAdvice(given) : what;
  };
  const hard_stop::StopNote note([&] { return stopped("classification stopped"); });
  // Stopped after its first block by anything (a cancel, a signal, a lost rank, a full disk),
  // a run keeps the blocks it finished (io/block_journal.h) for resume.
  try {
    openOutputs(given, o, ranks, run, out, progress);      // 3.
    counts = computeBand(o, ranks, run, out, progress);  // 4.
    result.warnings = run.warnings;
    if (counts.non_finite > 0) {
      result.warnings.push_back("'" + o.input + "' has NaN or infinite pixels it does not declare as nodata (" +
                                std::to_string(counts.non_finite) + " read): they are nodata in the output");
      if (ranks.writes()) progress.log("warning: " + result.warnings.back());
    }
    std::tie(result.polygons, result.polygons_dropped) = finishOutputs(o, ranks, run, out, counts, progress);  // 5.
  } catch (const Cancelled& e) {  // the same kind of error, saying what there is to resume
    throw Cancelled(stopped(e.what()));
  } catch (const RasterReadError&) {
    // The input's fault (a truncated copy): a resume reads another file, which it refuses, so
    // nothing is kept.
    if (out.kept.open) io::removeJournal(out.kept.folders);
    out.kept.open = false;
    throw;
  } catch (const IoError& e) {
    throw IoError(stopped(e.what()));
  } catch (const InputError& e) {
    throw InputError(stopped(e.what()));
  }
  const TileJob& job = run.job;
  const io::RasterInfo& grid = (run.input ? run.input : run.reader)->info();
  result.width = grid.width;
  result.height = grid.height;
  result.windows = job.plan.windows();
  result.windows_computed = counts.windows;
  result.batch_size = job.batch_size;
  result.window = job.plan.window;
  result.overlap = job.plan.overlap;
  result.computed_ratio = computedRatio(job, result.windows_computed);
  result.precision = run.precision;
  result.classes = run.predictor.info.classes;
  result.class_pixels = counts.class_pixels;
  result.nodata_pixels = counts.nodata_pixels;
  result.output = o.output;
  result.probabilities = o.probabilities;
  progress.report(1.0, "done");
  return result;
}

ClassifyResult classify(const ClassifyOptions& o, Progress& progress) {
  DataParallel alone(WorldInfo{}, 0, {});
  return classifyShared(o, alone, progress);
}

}  // namespace geodl
