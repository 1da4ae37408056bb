#include "app/classify.h"

#include <torch/torch.h>

#include <algorithm>
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
#include "base/metadata.h"
#include "core/device.h"
#include "base/errors.h"
#include "core/memory.h"
#include "model/model_file.h"
#include "core/tile_classifier.h"
#include "core/tile_plan.h"
#include "io/geotiff_writer.h"
#include "io/labels.h"
#include "io/polygonize.h"
#include "io/raster.h"
#include "io/raster_tiles.h"

namespace geodl {

namespace {

// Types whose every value another type holds (GDAL names).
bool typeFits(const std::string& input, const std::string& model) {
  if (input == model || model.empty() || model == "Float32" || model == "Float64") return true;
  static const std::map<std::string, std::vector<std::string>> wider = {
      {"Byte", {"UInt16", "Int16", "UInt32", "Int32"}},
      {"UInt16", {"UInt32", "Int32"}},
      {"Int16", {"Int32"}},
  };
  auto it = wider.find(input);
  return it != wider.end() && std::count(it->second.begin(), it->second.end(), model) > 0;
}

PixelRect extentToPixels(const ClassifyOptions& o, const io::RasterInfo& ri) {
  if (!o.has_extent) return {0, 0, ri.width, ri.height};
  const auto& gt = ri.geotransform;
  if (gt[2] != 0 || gt[4] != 0)
    throw InputError("an extent needs a north-up raster; '" + o.input + "' is rotated");
  const double ax = (o.extent[0] - gt[0]) / gt[1], bx = (o.extent[2] - gt[0]) / gt[1];
  const double ay = (o.extent[1] - gt[3]) / gt[5], by = (o.extent[3] - gt[3]) / gt[5];
  PixelRect r{std::max(0, int(std::floor(std::min(ax, bx)))), std::max(0, int(std::floor(std::min(ay, by)))),
              std::min(ri.width, int(std::ceil(std::max(ax, bx)))), std::min(ri.height, int(std::ceil(std::max(ay, by))))};
  if (r.x0 >= r.x1 || r.y0 >= r.y1) {
    std::ostringstream msg;
    msg << std::setprecision(12) << "the extent (" << o.extent[0] << ", " << o.extent[1] << ") - ("
        << o.extent[2] << ", " << o.extent[3] << ") lies outside the raster '" << o.input
        << "', which covers (" << gt[0] << ", " << gt[3] + gt[5] * ri.height << ") - ("
        << gt[0] + gt[1] * ri.width << ", " << gt[3] << "); give an extent in the raster's CRS";
    throw InputError(msg.str());
  }
  return r;
}

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


// Refuses a raster the model cannot read; warns about one it may read poorly.
void checkModelFits(const ClassifyOptions& o, const ModelInfo& info, const io::RasterInfo& ri, ClassifyResult& result) {
  if (ri.bands != info.spec.bands)
    throw InputError("'" + o.input + "' has " + std::to_string(ri.bands) + " bands but the model " + "expects " +
                     std::to_string(info.spec.bands) + " (" + info.data_type +
                     "), as in its training data; give a raster with the same bands");
  if (!typeFits(ri.data_type, info.data_type))
    throw InputError("'" + o.input + "' holds " + ri.data_type + " pixels but the model was trained " + "on " +
                     info.data_type + " ones: their values would not mean the same; convert the raster to " +
                     info.data_type + " or train on such data");
  if (ri.crs_wkt.empty())
    result.warnings.push_back("'" + o.input + "' has no CRS: classified anyway; the output has no CRS either");
  const double pixel = std::abs(ri.geotransform[1]);
  if (info.pixel_size_x > 0 && pixel > 0 && (pixel / info.pixel_size_x > 1.5 || info.pixel_size_x / pixel > 1.5)) {
    std::ostringstream msg;
    msg << "'" << o.input << "' has pixels of " << pixel << " map units but the model was trained "
        << "on pixels of " << info.pixel_size_x << ": results may be poor at another scale";
    result.warnings.push_back(msg.str());
  }
}

// A batch's inputs and probabilities and the blend weights alone must fit the memory budget:
// an absurd window is refused with the largest that fits, before anything is allocated.
void checkWindowMemory(const ClassifyOptions& o, const TileJob& job, int bands, const std::string& device_name) {
  const double budget_mib = o.memory_budget_mib > 0 ? o.memory_budget_mib : defaultMemoryBudgetMiB(device_name);
  const int batch = std::max(1, o.batch_size);
  const double bytes_per_pixel = 4.0 * (double(batch) * (bands + job.classes) + 1);
  const double window = job.plan.window;
  const double need_mib = bytes_per_pixel * window * window / (1024.0 * 1024.0);
  if (need_mib <= budget_mib) return;
  const int most = int(std::sqrt(budget_mib * 1024.0 * 1024.0 / bytes_per_pixel));
  throw InputError("a window of " + std::to_string(job.plan.window) + " pixels needs at least " +
                   std::to_string(int64_t(need_mib)) + " MiB for a batch of " + std::to_string(batch) +
                   " (its inputs, probabilities and blend weights alone), more than the memory budget of " +
                   std::to_string(int64_t(budget_mib)) + " MiB; use a window of at most " + std::to_string(most) +
                   " pixels, a smaller batch, or a larger memory_budget_mib");
}

double budgetBytes(const ClassifyOptions& o, const std::string& device_name) {
  return (o.memory_budget_mib > 0 ? o.memory_budget_mib : defaultMemoryBudgetMiB(device_name)) * 1024.0 * 1024.0;
}

// The memory of a forward pass: fixed bytes, and bytes per window of `window` pixels (forward
// peaks at 1 and 2 windows give the cost of one more).
struct WindowCost {
  double fixed = 0, per_window = 1;
};
WindowCost measureWindows(const ClassifyOptions& o, const Predictor& predictor, const std::string& device_name,
                          int bands, int window, torch::ScalarType type) {
  installCountingCpuAllocator();
  MemoryMeter meter(device_name);
  const torch::Device device(device_name);
  const auto peakOf = [&](int n) {
    meter.start();
    predict(predictor, torch::zeros({n, bands, window, window}, torch::TensorOptions().device(device)), o.tta, type);
    return double(meter.peak());
  };
  const double one = peakOf(1), two = peakOf(2), per = std::max(1.0, two - one);
  return {one - per, per};
}

// Window 0: as large as the memory budget allows a batch of (batch size 0: one window), in
// multiples of 32 pixels, up to kMaxAutomaticWindow, no larger than the raster needs (its
// longer side rounded up to 32) and at least the model's sample size. Larger windows compute
// fewer pixels twice; beyond 512 px the CPU computes each pixel slower (a window's
// activations leave the caches: 1024 px ran at 0.81x 512 px's GFLOP/s) for little less
// overlap, and a batch takes four times the memory.
constexpr int kMaxAutomaticWindow = 512;
int chooseWindow(const ClassifyOptions& o, const Predictor& predictor, const std::string& device_name,
                 const io::RasterInfo& ri, torch::ScalarType type, Progress& progress) {
  if (o.window > 0) return o.window;
  const int sample = predictor.info.sample_size;
  const int needed = (std::max(ri.width, ri.height) + 31) / 32 * 32;
  const int largest = std::max(sample, std::min(kMaxAutomaticWindow, needed));
  if (largest == sample) return sample;
  torch::NoGradGuard no_grad;
  const WindowCost cost = measureWindows(o, predictor, device_name, ri.bands, sample, type);
  const double per_pixel = cost.per_window / (double(sample) * sample);
  const double room = budgetBytes(o, device_name) - cost.fixed;
  const int fits = room > 0 ? int(std::sqrt(room / (std::max(1, o.batch_size) * per_pixel))) / 32 * 32 : 0;
  const int window = std::clamp(fits, sample, largest);
  std::ostringstream line;
  line << "window " << window << " px (automatic: " << std::fixed << std::setprecision(1)
       << per_pixel * window * window / (1024.0 * 1024.0) << " MiB per window, "
       << budgetBytes(o, device_name) / (1024.0 * 1024.0 * 1024.0) << " GiB budget)";
  progress.log(line.str());
  return window;
}

// Batch size 0: as many windows as fit the memory budget.
int chooseBatchSize(const ClassifyOptions& o, const Predictor& predictor, const std::string& device_name, int bands,
                    int window, torch::ScalarType type, Progress& progress) {
  if (o.batch_size > 0) return o.batch_size;
  const WindowCost cost = measureWindows(o, predictor, device_name, bands, window, type);
  const double per = cost.per_window;
  const int batch_size = int(std::clamp((budgetBytes(o, device_name) - cost.fixed) / per, 1.0, 256.0));
  progress.log("batch size " + std::to_string(batch_size) + " (automatic: " + std::to_string(int(per / (1024 * 1024))) +
               " MiB per window)");
  return batch_size;
}

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

// The windows to compute, row by row: those touching the extent and, with a mask, having a
// pixel inside its polygons.
std::vector<std::vector<int>> windowsToCompute(const TilePlan& plan, const PixelRect& area,
                                               const io::LabelRasterizer* mask) {
  std::vector<std::vector<int>> row_windows(plan.ys.size());
  std::vector<uint8_t> inside;
  for (size_t k = 0; k < plan.ys.size(); ++k) {
    const int y0 = plan.ys[k], h = std::min(plan.window, plan.height - y0);
    for (int x0 : plan.xs) {
      if (!(x0 < area.x1 && x0 + plan.window > area.x0 && y0 < area.y1 && y0 + plan.window > area.y0)) continue;
      if (mask) {
        mask->rasterize(x0, y0, std::min(plan.window, plan.width - x0), h, inside);
        if (std::find(inside.begin(), inside.end(), uint8_t(1)) == inside.end()) continue;
      }
      row_windows[k].push_back(x0);
    }
  }
  return row_windows;
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
                      {"precision", o.precision},
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

}  // namespace

void checkRuns(const std::vector<ClassifyOptions>& runs) {
  if (runs.size() < 2) return;  // classify() checks a single run itself
  std::vector<JobFile> outputs, inputs;
  std::vector<JobOutput> typed;
  for (const auto& run : runs) {
    const std::string of = " of '" + run.input + "'";
    for (const JobOutput& out : {JobOutput{"the class raster" + of, run.output, FileKind::GeoTiff},
                                 JobOutput{"the probability raster" + of, run.probabilities, FileKind::GeoTiff},
                                 JobOutput{"the polygon file" + of, run.polygons, FileKind::GeoPackage}}) {
      outputs.push_back({out.role, out.path});
      typed.push_back(out);
    }
    inputs.push_back({"the input raster '" + run.input + "'", run.input});
  }
  inputs.push_back({"the model file", runs.front().model_path});
  inputs.push_back({"the mask", runs.front().mask});
  checkOutputsSpareInputs(outputs, inputs);
  checkReplaceableOutputs(typed);
  for (const auto& run : runs) io::RasterReader check(run.input);  // throws naming the file
}

// A run's result as the ranks exchange it (the classes are the model's, the same everywhere).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ClassifyResult, output, probabilities, width, height, windows, windows_computed,
                                   batch_size, window, overlap, computed_ratio, precision, class_pixels,
                                   nodata_pixels, polygons, polygons_dropped, warnings)

namespace {

// What a run needs before its windows: the model, the raster, the plan.
struct RunPlan {
  OutputFolders folders;  // those it creates go again if the run fails
  Predictor predictor;
  std::unique_ptr<io::RasterReader> reader;
  std::unique_ptr<io::LabelRasterizer> mask;
  TileJob job;
  std::string device_name;
  std::string precision;  // fp32 or bf16
  torch::ScalarType type = torch::kFloat;  // of the weights
  std::vector<std::string> warnings;
};

// Pixels computed by `computed` of the job's windows per pixel of its extent.
double computedRatio(const TileJob& job, int64_t computed) {
  const PixelRect& a = job.area;
  return computedPerOutputPixel(job.plan, computed, int64_t(a.x1 - a.x0) * (a.y1 - a.y0));
}

// The windows of `window` pixels and which of them to compute (extent, mask).
void planWindows(const ClassifyOptions& o, int window, RunPlan& run) {
  const io::RasterInfo& ri = run.reader->info();
  const ModelInfo& info = run.predictor.info;
  TileJob& job = run.job;
  const int overlap = o.overlap >= 0 ? int(std::lround(window * o.overlap / 100.0))
                                     : automaticOverlap(info.sample_size, window);
  job.plan = planTilesOverlapping(ri.width, ri.height, window, overlap);
  job.area = extentToPixels(o, ri);
  job.classes = info.spec.classes;
  job.class_ids.clear();
  for (const auto& c : info.classes) job.class_ids.push_back(uint8_t(c.id));
  if (!o.mask.empty() && !run.mask)
    run.mask = std::make_unique<io::LabelRasterizer>(io::LabelSource{o.mask, o.mask_layer, "", {}}, ri, 255);
  job.row_windows = windowsToCompute(job.plan, job.area, run.mask.get());
  if (run.mask)
    job.inside = [mask = run.mask.get(), width = ri.width](int y, int n, std::vector<uint8_t>& strip) {
      mask->rasterize(0, y, width, n, strip);
    };
}

// Checks, model, raster and plan: when any rank fails here (a file missing on one machine),
// every rank stops at once with its message.
void planRun(const ClassifyOptions& o, DataParallel& ranks, Progress& progress, RunPlan& run) {
  ranks.together([&] {
    if (o.output.empty()) throw InputError("no output raster given");
    if (o.batch_size < 0) throw InputError("the batch size must be at least 1 (0: automatic)");
    if (o.min_area < 0) throw InputError("the minimum polygon area cannot be negative");
    run.folders.create(o.output);
    if (!o.probabilities.empty()) run.folders.create(o.probabilities);
    if (!o.polygons.empty()) run.folders.create(o.polygons);
    for (const auto& line : checkJobFiles({{"the class raster", o.output, FileKind::GeoTiff},
                                           {"the probability raster", o.probabilities, FileKind::GeoTiff},
                                           {"the polygon file", o.polygons, FileKind::GeoPackage}},
                                          {{"the input raster", o.input}, {"the model file", o.model_path},
                                           {"the model's sidecar", o.sidecar}, {"the mask", o.mask}}))
      if (ranks.writes()) progress.log(line);

    // 1. The model, the raster, and whether they fit each other.
    run.predictor = loadPredictor(o.model_path, o.sidecar);
    run.reader = std::make_unique<io::RasterReader>(o.input);
    ClassifyResult fits;
    fits.warnings = run.predictor.warnings;
    checkModelFits(o, run.predictor.info, run.reader->info(), fits);
    run.warnings = fits.warnings;
    if (ranks.writes())
      for (const auto& w : run.warnings) progress.log("warning: " + w);

    // 2. The device and precision; the plan: windows, extent, mask, batch size.
    const io::RasterInfo& ri = run.reader->info();
    run.device_name = resolveDevice(o.device);
    run.precision = resolvePrecision(o.precision, run.device_name);
    configureThreads(o.threads);
    run.predictor.to(torch::Device(run.device_name));
    if (run.precision == "bf16") {
      run.type = torch::kBFloat16;
      run.predictor.cast(run.type);  // once: the weights in bfloat16
      const std::string instructions = cpuBf16Instructions();
      if (ranks.writes())
        progress.log("precision bf16 (" + (run.device_name == "cpu" ? instructions : run.device_name) + ")");
    }
    planWindows(o, chooseWindow(o, run.predictor, run.device_name, ri, run.type, progress), run);
    TileJob& job = run.job;
    checkWindowMemory(o, job, ri.bands, run.device_name);
    torch::NoGradGuard no_grad;
    job.batch_size =
        chooseBatchSize(o, run.predictor, run.device_name, ri.bands, job.plan.window, run.type, progress);
  });
}

// Rank 0 appends the other ranks' bands to the outputs, which hold its own, and finishes
// them (not yet committed).
void assembleBands(const std::vector<io::RowBandFiles>& bands, const TileJob& job, io::GeoTiffTileSink& sink,
                   int ranks, Progress& progress) {
  const auto start = std::chrono::steady_clock::now();
  progress.report(1.0, "assembling " + std::to_string(ranks) + " bands");
  io::copyRowBands(bands, job.plan.ys, job.plan.width, job.classes, sink, [&] { progress.checkCancelled(); });
  sink.finish();
  std::ostringstream line;
  line << std::fixed << std::setprecision(2) << "assembled the bands of " << ranks << " ranks in "
       << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s";
  progress.log(line.str());
}

// One raster, shared in bands between the ranks (all of it in one process).
ClassifyResult classifyShared(const ClassifyOptions& o, DataParallel& ranks, Progress& progress) {
  // Reused blocks for the batches of windows, within half again the batch's peak: the
  // sizes vary within a forward pass, and an eighth re-faulted 4 GiB a minute (10% slower).
  CpuMemoryScope memory(0.5);
  RunPlan run;
  planRun(o, ranks, progress, run);
  const io::RasterReader& reader = *run.reader;
  const io::RasterInfo& ri = reader.info();
  const Predictor& predictor = run.predictor;
  const ModelInfo& info = predictor.info;
  TileJob& job = run.job;
  ClassifyResult result;
  result.warnings = run.warnings;
  const torch::Device device(run.device_name);
  torch::NoGradGuard no_grad;
  // With ranks: the same job everywhere, the batch that fits them all, this rank's band.
  // Each rank measured its own memory: the smallest window and batch serve them all.
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
  ranks.checkSameRun(runDescription(o, ri, job), "classify another job");
  const std::vector<RowBand> all_bands = bandsOf(job, ranks);
  job.band = all_bands[size_t(ranks.active() ? ranks.rank() : 0)];
  int64_t job_windows = 0;  // the windows all ranks compute (the rows above a band twice)
  for (const RowBand& b : all_bands) job_windows += windowsOf(job, b.first_row, b.end(job.plan));
  const int band_y0 = job.band.y0(job.plan), band_rows = job.band.y1(job.plan) - band_y0;

  // 3. The outputs (a rank's part of them when ranks share the raster), opened now so that
  // an unwritable path fails before any work; then the windows, streamed to them.
  const io::GeoTiffSpec spec = classSpec(ri, info, o.cog);
  const io::GeoTiffSpec probability_spec = probabilitySpec(spec, info, o.probabilities_float);
  // Rank 0's band (the first rows) goes straight into the outputs; the other ranks' into
  // their parts, which rank 0 appends.
  std::unique_ptr<io::GeoTiffTileSink> sink, part;  // the outputs; this rank's part of them
  std::vector<io::RowBandFiles> bands;  // every other rank's
  PartFiles parts;
  if (ranks.writes()) sink = std::make_unique<io::GeoTiffTileSink>(o.output, spec, o.probabilities, probability_spec);
  if (ranks.active()) {
    if (band_rows > 0 && !ranks.writes())
      part = std::make_unique<io::GeoTiffTileSink>(
          partPath(o.output, ranks.rank()), bandSpec(spec, band_y0, band_rows), partPath(o.probabilities, ranks.rank()),
          bandSpec(probability_spec, band_y0, band_rows));
    const io::RowBandFiles mine{part ? part->finishedClasses() : "", part ? part->finishedProbabilities() : "",
                                band_y0, part ? band_rows : 0};
    for (const auto& text : ranks.gatherText(bandJson(mine).dump())) {
      const auto b = nlohmann::json::parse(text);
      bands.push_back({b.at("classes"), b.at("probabilities"), b.at("y0"), b.at("rows")});
      parts.files.insert(parts.files.end(), {bands.back().classes, bands.back().probabilities});
    }
  }
  const io::RasterTileSource source(reader, info.band_mean, info.band_std);
  std::vector<int64_t> counts(size_t(job.classes) + 3, 0);  // class pixels, nodata, windows, non-finite
  const int end_row = job.band.end(job.plan);
  RankProgress shared(progress, ranks, "windows:" + o.output, job_windows, windowsOf(job, job.band.first_row, end_row));
  if (io::GeoTiffTileSink* target = part ? part.get() : band_rows > 0 ? sink.get() : nullptr) {
    BandSink band_sink(*target, part ? band_y0 : 0);
    const TileResult tiles = classifyTiles([&](const torch::Tensor& x) { return predict(predictor, x, o.tta, run.type); },
                                           source, band_sink, job, device, shared);
    std::copy(tiles.class_pixels.begin(), tiles.class_pixels.end(), counts.begin());
    counts[size_t(job.classes)] = tiles.nodata_pixels;
    // The windows of this rank's own blocks (the rows before them are the neighbour's).
    counts[size_t(job.classes) + 1] = windowsOf(job, job.band.first_block, end_row);
    shared.checkCancelled();
    if (target == part.get() || !ranks.active()) target->finish();
  }
  counts[size_t(job.classes) + 2] = reader.undeclaredNonFinitePixels();
  ranks.awaitAll("classified:" + o.output, [&] { shared.showJob(); });
  ranks.sum(counts);
  if (const int64_t n = counts[size_t(job.classes) + 2]) {
    result.warnings.push_back("'" + o.input + "' has NaN or infinite pixels it does not declare as nodata (" +
                              std::to_string(n) + " read): they are nodata in the output");
    if (ranks.writes()) progress.log("warning: " + result.warnings.back());
  }

  // 4. Rank 0 assembles the ranks' bands into the outputs; polygons from the finished class
  // raster; then every output is moved into place together, so that a failure (a full disk)
  // leaves the previous outputs as they were.
  if (ranks.active() && ranks.writes()) assembleBands(bands, job, *sink, ranks.size(), progress);
  std::optional<AtomicOutput> polygons;
  if (!o.polygons.empty() && ranks.writes()) {
    progress.report(1.0, "polygons");
    polygons.emplace(o.polygons, ".gpkg");
    const auto p = io::polygonizeClasses(sink->finishedClasses(), *polygons, spec.categories, o.min_area);
    result.polygons = p.polygons;
    result.polygons_dropped = p.dropped;
  }
  if (ranks.writes()) {
    shared.checkCancelled();
    sink->commit();
    if (polygons) polygons->commit();
  }
  ranks.awaitAll("written:" + o.output);
  parts.keep = true;
  result.width = ri.width;
  result.height = ri.height;
  result.windows = job.plan.windows();
  result.windows_computed = counts[size_t(job.classes) + 1];
  result.batch_size = job.batch_size;
  result.window = job.plan.window;
  result.overlap = job.plan.overlap;
  result.computed_ratio = computedRatio(job, result.windows_computed);
  result.precision = run.precision;
  result.classes = info.classes;
  result.class_pixels.assign(counts.begin(), counts.begin() + job.classes);
  result.nodata_pixels = counts[size_t(job.classes)];
  result.output = o.output;
  result.probabilities = o.probabilities;
  progress.report(1.0, "done");
  return result;
}

// Whole rasters to ranks: the largest first, each to the rank with the fewest pixels so far.
std::vector<int> rasterOwners(const std::vector<ClassifyOptions>& runs, int ranks, std::vector<int64_t>& pixels) {
  std::vector<size_t> order(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    order[i] = i;
    const io::RasterReader r(runs[i].input);
    pixels.push_back(int64_t(r.info().width) * r.info().height);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pixels[a] > pixels[b]; });
  std::vector<int64_t> load(size_t(ranks), 0);
  std::vector<int> owner(runs.size(), 0);
  for (size_t i : order) {
    const int r = int(std::min_element(load.begin(), load.end()) - load.begin());
    owner[i] = r;
    load[size_t(r)] += pixels[i];
  }
  return owner;
}

}  // namespace

ClassifyResult classify(const ClassifyOptions& o, Progress& progress) {
  DataParallel alone(WorldInfo{}, 0, "");
  return classifyShared(o, alone, progress);
}

void classifyAll(const std::vector<ClassifyOptions>& given, const WorldInfo& world, double collective_timeout,
                 Progress& progress, const std::function<void(size_t, const ClassifyResult&)>& done) {
  DataParallel ranks(world, collective_timeout,
                     "nothing of the raster at hand was written (the rasters before it are complete): start the "
                     "job again");
  // Each rank takes its share of the cores unless threads says otherwise, and local rank r
  // the GPU r.
  std::vector<ClassifyOptions> runs = given;
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  for (auto& run : runs) {
    if (run.threads == 0 && world.local_size > 1) run.threads = std::max(1, cores / world.local_size);
    if (world.local_size > 1 && (run.device == "auto" || run.device == "cuda") && resolveDevice(run.device) != "cpu")
      run.device = "cuda:" + std::to_string(world.local_rank);
  }
  if (!ranks.active() || runs.size() < size_t(ranks.size())) {
    // Each raster in turn, shared in bands.
    for (size_t i = 0; i < runs.size(); ++i) {
      SubProgress part(progress, double(i) / runs.size(), double(i + 1) / runs.size());
      ClassifyResult result;
      ranks.guarded([&] { result = classifyShared(runs[i], ranks, part); });
      if (ranks.writes() && done) done(i, result);
    }
    ranks.barrier();
    return;
  }
  // More rasters than ranks: whole rasters each.
  std::vector<int64_t> pixels;
  const std::vector<int> owner = rasterOwners(runs, ranks.size(), pixels);
  int64_t total = 0, mine = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    total += pixels[i];
    if (owner[i] == ranks.rank()) mine += pixels[i];
  }
  RankProgress shared(progress, ranks, "pixels:rasters", total, mine);
  nlohmann::json results = nlohmann::json::object();
  std::vector<ModelClass> classes;
  ranks.guarded([&] {
    int64_t at = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (owner[i] != ranks.rank()) continue;
      SubProgress part(shared, double(at) / double(std::max<int64_t>(1, mine)),
                       double(at + pixels[i]) / double(std::max<int64_t>(1, mine)));
      const ClassifyResult r = classify(runs[i], part);
      at += pixels[i];
      classes = r.classes;
      results[std::to_string(i)] = r;
    }
  });
  ranks.awaitAll("rasters", [&] { shared.showJob(); });
  const std::vector<std::string> all = ranks.gatherText(results.dump());
  ranks.barrier();
  if (!ranks.writes() || !done) return;
  nlohmann::json merged = nlohmann::json::object();
  for (const auto& text : all) merged.update(nlohmann::json::parse(text));
  for (size_t i = 0; i < runs.size(); ++i) {
    ClassifyResult r = merged.at(std::to_string(i)).get<ClassifyResult>();
    r.classes = classes;  // the model's, the same on every rank
    done(i, r);
  }
}

}  // namespace geodl
