#include "app/classify.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>

#include "base/atomic_file.h"
#include "base/file_identity.h"
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

// Softmax probabilities of a batch, averaged over the 8 flips and quarter turns with TTA.
torch::Tensor predict(const Predictor& model, const torch::Tensor& x, bool tta) {
  if (!tta) return torch::softmax(model.forward(x), 1);
  torch::Tensor sum;
  for (int flip = 0; flip < 2; ++flip)
    for (int k = 0; k < 4; ++k) {
      torch::Tensor t = flip ? x.flip({3}) : x;
      t = torch::rot90(t, k, {2, 3});
      torch::Tensor p = torch::rot90(torch::softmax(model.forward(t), 1), -k, {2, 3});
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

// Batch size 0: as many windows as fit the memory budget (forward peaks at 1 and 2 windows
// give the cost of one more).
int chooseBatchSize(const ClassifyOptions& o, const Predictor& predictor, const std::string& device_name, int bands,
                    int window, Progress& progress) {
  if (o.batch_size > 0) return o.batch_size;
  installCountingCpuAllocator();
  MemoryMeter meter(device_name);
  const torch::Device device(device_name);
  const auto peakOf = [&](int n) {
    meter.start();
    predict(predictor, torch::zeros({n, bands, window, window}, torch::TensorOptions().device(device)), o.tta);
    return double(meter.peak());
  };
  const double one = peakOf(1), two = peakOf(2), per = std::max(1.0, two - one);
  const double budget =
      (o.memory_budget_mib > 0 ? o.memory_budget_mib : defaultMemoryBudgetMiB(device_name)) * 1024.0 * 1024.0;
  const int batch_size = int(std::clamp((budget - (one - per)) / per, 1.0, 256.0));
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

ClassifyResult classify(const ClassifyOptions& o, Progress& progress) {
  CpuMemoryScope memory;  // reused blocks for the batches of windows
  if (o.output.empty()) throw InputError("no output raster given");
  if (o.batch_size < 0) throw InputError("the batch size must be at least 1 (0: automatic)");
  if (o.min_area < 0) throw InputError("the minimum polygon area cannot be negative");
  OutputFolders folders;  // those it creates go again if the run fails
  folders.create(o.output);
  if (!o.probabilities.empty()) folders.create(o.probabilities);
  if (!o.polygons.empty()) folders.create(o.polygons);
  for (const auto& line : checkJobFiles({{"the class raster", o.output, FileKind::GeoTiff},
                                         {"the probability raster", o.probabilities, FileKind::GeoTiff},
                                         {"the polygon file", o.polygons, FileKind::GeoPackage}},
                                        {{"the input raster", o.input}, {"the model file", o.model_path},
                                         {"the model's sidecar", o.sidecar}, {"the mask", o.mask}}))
    progress.log(line);

  // 1. The model, the raster, and whether they fit each other.
  const Predictor predictor = loadPredictor(o.model_path, o.sidecar);
  const ModelInfo& info = predictor.info;
  const io::RasterReader reader(o.input);
  const io::RasterInfo& ri = reader.info();
  ClassifyResult result;
  result.warnings = predictor.warnings;
  checkModelFits(o, info, ri, result);
  for (const auto& w : result.warnings) progress.log("warning: " + w);

  // 2. The plan: windows, extent, mask, device, batch size.
  TileJob job;
  job.plan = planTiles(ri.width, ri.height, o.window > 0 ? o.window : info.sample_size, o.overlap);
  job.area = extentToPixels(o, ri);
  job.classes = info.spec.classes;
  for (const auto& c : info.classes) job.class_ids.push_back(uint8_t(c.id));
  std::unique_ptr<io::LabelRasterizer> mask;
  if (!o.mask.empty()) mask = std::make_unique<io::LabelRasterizer>(io::LabelSource{o.mask, o.mask_layer, "", {}}, ri, 255);
  job.row_windows = windowsToCompute(job.plan, job.area, mask.get());
  if (mask) job.inside = [&](int y, int n, std::vector<uint8_t>& strip) { mask->rasterize(0, y, ri.width, n, strip); };
  const std::string device_name = resolveDevice(o.device);
  configureThreads(o.threads);
  const torch::Device device(device_name);
  predictor.to(device);
  torch::NoGradGuard no_grad;
  checkWindowMemory(o, job, ri.bands, device_name);
  job.batch_size = chooseBatchSize(o, predictor, device_name, ri.bands, job.plan.window, progress);

  // 3. The outputs, opened now so that an unwritable path fails before any work; then the
  // windows, streamed from the raster to them.
  const io::GeoTiffSpec spec = classSpec(ri, info, o.cog);
  io::GeoTiffTileSink sink(o.output, spec, o.probabilities, probabilitySpec(spec, info, o.probabilities_float));
  const io::RasterTileSource source(reader, info.band_mean, info.band_std);
  const TileResult tiles = classifyTiles([&](const torch::Tensor& x) { return predict(predictor, x, o.tta); },
                                         source, sink, job, device, progress);
  progress.checkCancelled();
  sink.finish();
  if (const int64_t n = reader.undeclaredNonFinitePixels()) {
    result.warnings.push_back("'" + o.input + "' has NaN or infinite pixels it does not declare as nodata (" +
                              std::to_string(n) + " read): they are nodata in the output");
    progress.log("warning: " + result.warnings.back());
  }

  // 4. Polygons from the finished class raster; then every output is moved into place
  // together, so that a failure (a full disk) leaves the previous outputs as they were.
  std::optional<AtomicOutput> polygons;
  if (!o.polygons.empty()) {
    progress.report(1.0, "polygons");
    polygons.emplace(o.polygons, ".gpkg");
    const auto p = io::polygonizeClasses(sink.finishedClasses(), *polygons, spec.categories, o.min_area);
    result.polygons = p.polygons;
    result.polygons_dropped = p.dropped;
  }
  progress.checkCancelled();
  sink.commit();
  if (polygons) polygons->commit();
  result.width = ri.width;
  result.height = ri.height;
  result.windows = job.plan.windows();
  result.windows_computed = tiles.windows_computed;
  result.batch_size = job.batch_size;
  result.classes = info.classes;
  result.class_pixels = tiles.class_pixels;
  result.nodata_pixels = tiles.nodata_pixels;
  result.output = o.output;
  result.probabilities = o.probabilities;
  progress.report(1.0, "done");
  return result;
}

}  // namespace geodl
