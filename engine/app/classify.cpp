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
#include <thread>

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

// A band's rows handed to a sink of those rows alone (a rank's part files).
class BandSink final : public TileSink {
 public:
  BandSink(TileSink& inner, int y0) : inner_(inner), y0_(y0) {}
  ProbabilityType probabilities() const override { return inner_.probabilities(); }
  void writeRows(int y, int n, const uint8_t* ids, const void* probabilities) override {
    inner_.writeRows(y - y0_, n, ids, probabilities);
  }

 private:
  TileSink& inner_;
  int y0_;
};

// A part of a rank: rows [y0, y0 + rows) of the output's grid, beside the output (the job's
// folders are shared between the machines), under a temporary name that no output has.
io::GeoTiffSpec bandSpec(io::GeoTiffSpec spec, int y0, int rows) {
  auto& gt = spec.geotransform;
  gt[0] += y0 * gt[2];
  gt[3] += y0 * gt[5];
  spec.height = rows;
  spec.cog = false;
  return spec;
}
std::string partPath(const std::string& output, int rank) {
  return output.empty() ? "" : output + ".rank-" + std::to_string(rank);
}
// An output at the grid of the resampled view (classify's resample).
std::string viewOutput(const std::string& output) { return output.empty() ? "" : output + ".model-grid"; }

nlohmann::json bandJson(const io::RowBandFiles& b) {
  return {{"classes", b.classes}, {"probabilities", b.probabilities}, {"y0", b.y0}, {"rows", b.rows}};
}

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

// The rows of a job's windows the ranks share: every rank's band (one process: all rows).
std::vector<RowBand> bandsOf(const TileJob& job, const DataParallel& ranks) {
  if (!ranks.active()) return {RowBand{}};
  std::vector<int64_t> counts;
  for (const auto& xs : job.row_windows) counts.push_back(int64_t(xs.size()));
  return splitRows(job.plan, counts, ranks.size());
}

int64_t windowsOf(const TileJob& job, int first_row, int end_row) {
  int64_t n = 0;
  for (int k = first_row; k < end_row; ++k) n += int64_t(job.row_windows[size_t(k)].size());
  return n;
}



// " in 1.23 s": the seconds since `start`, for the log.
std::string inSeconds(std::chrono::steady_clock::time_point start, int digits) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(digits) << " in "
       << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s";
  return text.str();
}

// Rank 0 appends the other ranks' bands to the outputs, which hold its own, and finishes
// them (not yet committed).
void assembleBands(const std::vector<io::RowBandFiles>& bands, const TileJob& job, io::GeoTiffTileSink& sink,
                   int ranks, Progress& progress) {
  const auto start = std::chrono::steady_clock::now();
  progress.report(1.0, "assembling " + std::to_string(ranks) + " bands");
  io::copyRowBands(bands, job.plan.ys, job.plan.width, job.classes, sink, [&] { progress.checkCancelled(); });
  sink.finish();
  progress.log("assembled the bands of " + std::to_string(ranks) + " ranks" + inSeconds(start, 2));
}

// What a run counted, summed over the ranks.
struct RunCounts {
  std::vector<int64_t> class_pixels;  // per model class
  int64_t nodata_pixels = 0;
  int64_t windows = 0;      // computed, each once (a band's own blocks)
  int64_t non_finite = 0;   // NaN or infinite pixels read that the raster does not declare nodata

  void sumOver(DataParallel& ranks) {
    std::vector<int64_t> all = class_pixels;
    all.insert(all.end(), {nodata_pixels, windows, non_finite});
    ranks.sum(all);
    const size_t n = class_pixels.size();
    class_pixels.assign(all.begin(), all.begin() + long(n));
    nodata_pixels = all[n];
    windows = all[n + 1];
    non_finite = all[n + 2];
  }
};

// Stage 2: the same plan on every rank (the smallest window and batch any rank measured),
// logged, and this rank's band of it. Returns the windows all ranks compute (the rows above a
// band twice).
int64_t agreeOnPlan(const ClassifyOptions& o, DataParallel& ranks, RunPlan& run, Progress& progress) {
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
  const std::vector<RowBand> all_bands = bandsOf(job, ranks);
  job.band = all_bands[size_t(ranks.active() ? ranks.rank() : 0)];
  int64_t job_windows = 0;
  for (const RowBand& b : all_bands) job_windows += windowsOf(job, b.first_row, b.end(job.plan));
  return job_windows;
}

// The outputs of a run: rank 0's (its band, the first rows, goes straight into them), this
// rank's part of them when ranks share the raster, and the other ranks' parts.
struct RunOutputs {
  io::GeoTiffSpec spec, probability_spec;
  std::unique_ptr<io::GeoTiffTileSink> sink, part;
  std::unique_ptr<io::GeoTiffTileSink> grid;  // resampled: the outputs at the raster's grid
  std::vector<io::RowBandFiles> bands;  // every other rank's
  PartFiles parts;                      // removed unless the run went well
  int band_y0 = 0, band_rows = 0;
  // .vrt outputs (io/parts_vrt.h): every rank writes its band as a part into the staging
  // folders (`part`, committed there when complete), and rank 0 moves them into place under
  // the VRTs: nothing is assembled.
  bool in_parts = false;
  std::unique_ptr<io::PartsOutput> class_parts, probability_parts;  // rank 0's
  std::vector<io::VrtPart> class_part_files, probability_part_files;  // every rank's, staged
  std::string part_path;  // this rank's class part, once committed in the staging folder
  // With ranks and polygons: this rank's part polygonized (a temporary rank 0 reads; it goes
  // when the job ends).
  std::optional<AtomicOutput> part_polygons;
};

// Stage 3 for .vrt outputs: rank 0 makes the staging folders, every rank opens its part in
// them, and every rank learns which parts there will be.
void openPartOutputs(const ClassifyOptions& o, DataParallel& ranks, RunOutputs& out) {
  out.in_parts = true;
  if (ranks.writes()) {
    out.class_parts = std::make_unique<io::PartsOutput>(o.output, out.spec);
    if (!o.probabilities.empty())
      out.probability_parts = std::make_unique<io::PartsOutput>(o.probabilities, out.probability_spec);
  }
  const nlohmann::json staging = nlohmann::json::parse(ranks.gatherText(
      nlohmann::json{out.class_parts ? out.class_parts->staging() : "",
                     out.probability_parts ? out.probability_parts->staging() : ""}
          .dump())
                                                           .front());
  const std::string classes = staging[0], probabilities = staging[1];
  const auto in = [](const std::string& folder, const std::string& name) {
    return folder.empty() ? std::string() : (std::filesystem::path(folder) / name).string();
  };
  const std::string name = io::partName(ranks.active() ? ranks.rank() : 0);
  out.part_path = in(classes, name);
  if (out.band_rows > 0)
    out.part = std::make_unique<io::GeoTiffTileSink>(
        out.part_path, bandSpec(out.spec, out.band_y0, out.band_rows), in(probabilities, name),
        bandSpec(out.probability_spec, out.band_y0, out.band_rows));
  const nlohmann::json mine = {{"name", out.band_rows > 0 ? name : ""}, {"y0", out.band_y0}, {"rows", out.band_rows}};
  for (const auto& text : ranks.gatherText(mine.dump())) {
    const auto part = nlohmann::json::parse(text);
    if (part.at("name").get<std::string>().empty()) continue;
    out.class_part_files.push_back({in(classes, part.at("name")), part.at("y0"), part.at("rows")});
    if (!probabilities.empty())
      out.probability_part_files.push_back({in(probabilities, part.at("name")), part.at("y0"), part.at("rows")});
  }
}

// Stage 3: the outputs opened, so that an unwritable path fails before any work.
void openOutputs(const ClassifyOptions& o, DataParallel& ranks, const RunPlan& run, RunOutputs& out) {
  const TileJob& job = run.job;
  out.spec = classSpec(run.reader->info(), run.predictor.info, o.cog && !run.view);
  out.probability_spec = probabilitySpec(out.spec, run.predictor.info, o.probabilities_float);
  out.band_y0 = job.band.y0(job.plan);
  out.band_rows = job.band.y1(job.plan) - out.band_y0;
  if (io::isVrtPath(o.output)) return openPartOutputs(o, ranks, out);  // planRun refuses it resampled
  // Resampled, the windows' outputs are at the view's grid, beside the outputs, never
  // committed: the outputs at the raster's grid are made from them (finishOutputs).
  const std::string classes = run.view ? viewOutput(o.output) : o.output;
  const std::string probabilities = run.view ? viewOutput(o.probabilities) : o.probabilities;
  if (ranks.writes()) {
    out.sink = std::make_unique<io::GeoTiffTileSink>(classes, out.spec, probabilities, out.probability_spec);
    if (run.view)
      out.grid = std::make_unique<io::GeoTiffTileSink>(
          o.output, classSpec(run.input->info(), run.predictor.info, o.cog), o.probabilities,
          probabilitySpec(classSpec(run.input->info(), run.predictor.info, o.cog), run.predictor.info,
                          o.probabilities_float));
  }
  if (!ranks.active()) return;
  if (out.band_rows > 0 && !ranks.writes())
    out.part = std::make_unique<io::GeoTiffTileSink>(
        partPath(classes, ranks.rank()), bandSpec(out.spec, out.band_y0, out.band_rows),
        partPath(probabilities, ranks.rank()), bandSpec(out.probability_spec, out.band_y0, out.band_rows));
  const io::GeoTiffTileSink* part = out.part.get();
  const io::RowBandFiles mine{part ? part->finishedClasses() : "", part ? part->finishedProbabilities() : "",
                              out.band_y0, part ? out.band_rows : 0};
  for (const auto& text : ranks.gatherText(bandJson(mine).dump())) {
    const auto b = nlohmann::json::parse(text);
    out.bands.push_back({b.at("classes"), b.at("probabilities"), b.at("y0"), b.at("rows")});
    out.parts.files.insert(out.parts.files.end(), {out.bands.back().classes, out.bands.back().probabilities});
  }
}

// Stage 4: this rank's windows, streamed to its outputs; the counts of all ranks.
RunCounts computeBand(const ClassifyOptions& o, DataParallel& ranks, const RunPlan& run, RunOutputs& out,
                      int64_t job_windows, Progress& progress) {
  const TileJob& job = run.job;
  RunCounts counts;
  counts.class_pixels.assign(size_t(job.classes), 0);
  const int end_row = job.band.end(job.plan);
  RankProgress shared(progress, ranks, "windows:" + o.output, job_windows, windowsOf(job, job.band.first_row, end_row));
  const io::RasterTileSource source(*run.reader, run.predictor.info.band_mean, run.predictor.info.band_std);
  io::GeoTiffTileSink* target = out.part ? out.part.get() : out.band_rows > 0 ? out.sink.get() : nullptr;
  if (target) {
    const hard_stop::LoopScope loop;  // stops by itself at its next batch
    BandSink band_sink(*target, out.part ? out.band_y0 : 0);
    const TileResult tiles =
        classifyTiles([&](const torch::Tensor& x) { return predict(run.predictor, x, o.tta, run.type); }, source,
                      band_sink, job, torch::Device(run.device_name), shared);
    counts.class_pixels = tiles.class_pixels;
    counts.nodata_pixels = tiles.nodata_pixels;
    counts.windows = windowsOf(job, job.band.first_block, end_row);  // the rows before are the neighbour's
    shared.checkCancelled();
    if (target == out.part.get() || !ranks.active()) target->finish();
    if (out.in_parts) target->commit();  // into the staging folder, where rank 0 finds it
    if (out.in_parts && ranks.active() && !o.polygons.empty()) {  // each rank its own part's
      out.part_polygons.emplace(o.polygons + ".part-" + std::to_string(ranks.rank()), ".gpkg");
      io::polygonizePart(out.part_path, out.part_polygons->temporary());
    }
  }
  counts.non_finite = run.reader->undeclaredNonFinitePixels();
  ranks.awaitAll("classified:" + o.output, [&] { shared.showJob(); });
  counts.sumOver(ranks);
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

// Stage 5: rank 0 assembles the ranks' bands into the outputs, makes the polygons from the
// finished class raster, then moves every output into place together, so that a failure (a
// full disk) leaves the previous outputs as they were. Returns the polygons' counts.
std::pair<int64_t, int64_t> finishOutputs(const ClassifyOptions& o, DataParallel& ranks, const RunPlan& run,
                                          RunOutputs& out, RunCounts& counts, Progress& progress) {
  std::pair<int64_t, int64_t> polygon_counts{0, 0};
  if (ranks.active() && ranks.writes() && !out.in_parts) {
    const hard_stop::LoopScope loop;
    assembleBands(out.bands, run.job, *out.sink, ranks.size(), progress);
  }
  if (run.view) toRasterGrid(run, out, counts, ranks, progress);
  io::GeoTiffTileSink* finished = out.grid ? out.grid.get() : out.sink.get();
  std::optional<AtomicOutput> polygons;
  std::vector<std::string> part_polygons;  // every rank's (empty: a rank without a part)
  if (!o.polygons.empty() && out.in_parts && ranks.active())
    part_polygons = ranks.gatherText(out.part_polygons ? out.part_polygons->temporary() : "");
  if (!o.polygons.empty() && ranks.writes()) {
    progress.report(1.0, "polygons");
    polygons.emplace(o.polygons, ".gpkg");
    io::PolygonizeResult p;
    if (!part_polygons.empty()) {
      // The ranks polygonized their parts: merged along the parts' borders.
      std::vector<std::string> files;
      std::vector<double> borders;
      const auto& gt = out.spec.geotransform;
      size_t next = 0;
      for (const std::string& file : part_polygons) {
        if (file.empty()) continue;
        if (!files.empty()) borders.push_back(gt[3] + out.class_part_files.at(next).y0 * gt[5]);
        files.push_back(file);
        ++next;
      }
      const auto start = std::chrono::steady_clock::now();
      p = io::mergePartPolygons(files, borders, std::abs(gt[5]) * 1e-3, *polygons, out.spec.categories, o.min_area);
      progress.log("merged the polygons of " + std::to_string(files.size()) + " parts along their borders" +
                   inSeconds(start, 2));
    } else {
      const std::string classes =
          out.in_parts ? out.class_parts->stagedView(out.class_part_files) : finished->finishedClasses();
      p = io::polygonizeClasses(classes, *polygons, out.spec.categories, o.min_area);
    }
    polygon_counts = {p.polygons, p.dropped};
  }
  if (ranks.writes()) {
    progress.checkCancelled();
    const auto start = std::chrono::steady_clock::now();
    const hard_stop::CommitScope moving;  // all the outputs or none
    if (out.in_parts) {
      out.class_parts->commit(out.class_part_files);
      if (out.probability_parts) out.probability_parts->commit(out.probability_part_files);
      const size_t n = out.class_part_files.size();
      progress.log("wrote the VRT over the parts of " + std::to_string(n) + (n == 1 ? " rank" : " ranks") +
                   inSeconds(start, 3));
    } else {
      finished->commit();
    }
    if (polygons) polygons->commit();
  }
  ranks.awaitAll("written:" + o.output);
  out.parts.keep = true;
  return polygon_counts;
}

}  // namespace

ClassifyResult classifyShared(const ClassifyOptions& o, DataParallel& ranks, Progress& progress) {
  // Reused blocks for the batches of windows, within half again the batch's peak: the
  // sizes vary within a forward pass, and an eighth re-faulted 4 GiB a minute (10% slower).
  CpuMemoryScope memory(0.5);
  torch::NoGradGuard no_grad;
  RunPlan run;
  planRun(o, ranks, progress, run);                                   // 1. checks, model, raster, plan
  const int64_t job_windows = agreeOnPlan(o, ranks, run, progress);  // 2. one plan for all ranks
  RunOutputs out;
  openOutputs(o, ranks, run, out);                                                     // 3.
  RunCounts counts = computeBand(o, ranks, run, out, job_windows, progress);            // 4.
  ClassifyResult result;
  result.warnings = run.warnings;
  if (counts.non_finite > 0) {
    result.warnings.push_back("'" + o.input + "' has NaN or infinite pixels it does not declare as nodata (" +
                              std::to_string(counts.non_finite) + " read): they are nodata in the output");
    if (ranks.writes()) progress.log("warning: " + result.warnings.back());
  }
  std::tie(result.polygons, result.polygons_dropped) = finishOutputs(o, ranks, run, out, counts, progress);  // 5.
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
