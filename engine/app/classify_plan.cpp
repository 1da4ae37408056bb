// Stage 1 of classification: the options and outputs checked, the model loaded and fitted to
// the raster, the device and precision, the windows, and the batch that fits the memory budget.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "app/classify_stages.h"
#include "base/errors.h"
#include "base/file_identity.h"
#include "base/file_kind.h"
#include "core/device.h"
#include "core/memory.h"
#include "core/tile_plan.h"
#include "io/parts_vrt.h"
#include "io/raster.h"

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



// "metres", "degrees", "US survey feet".
std::string plural(const std::string& unit) {
  const std::string foot = "foot";
  if (unit.size() >= foot.size() && unit.compare(unit.size() - foot.size(), foot.size(), foot) == 0)
    return unit.substr(0, unit.size() - foot.size()) + "feet";
  return unit + "s";
}

std::string number(double v) {
  std::ostringstream out;
  out << std::setprecision(6) << v;
  return out.str();
}

// Refuses a raster the model cannot read, and one unlike its training data (the pixel type,
// the CRS's units, a pixel size more than 2x off, values far outside the trained range)
// unless accept_mismatch turns those into warnings; warns about one it may read poorly.
void checkModelFits(const ClassifyOptions& o, const ModelInfo& info, const io::RasterInfo& ri, ClassifyResult& result) {
  if (ri.bands != info.spec.bands)
    throw InputError("'" + o.input + "' has " + std::to_string(ri.bands) + " bands but the model " + "expects " +
                     std::to_string(info.spec.bands) + " (" + info.data_type +
                     "), as in its training data; give a raster with the same bands");
  const auto mismatch = [&](const std::string& what, const std::string& fix) {
    if (o.accept_mismatch)
      result.warnings.push_back(what + ": classified anyway (accept_mismatch); expect poor results");
    else
      throw InputError(what + "; " + fix + ", or set " + classifyOptionNamed("accept_mismatch") +
                       " to classify it anyway");
  };
  if (!typeFits(ri.data_type, info.data_type))
    mismatch("'" + o.input + "' holds " + ri.data_type + " pixels but the model was trained on " + info.data_type +
                 " ones: their values would not mean the same",
             "convert the raster to " + info.data_type + " or train on such data");
  if (ri.crs_wkt.empty())
    result.warnings.push_back("'" + o.input + "' has no CRS: classified anyway; the output has no CRS either");

  // The bands' wavelengths, where the model file and the raster's band metadata both give
  // them: more than 0.05 micrometres (or 10%) apart is another band (bands in another order,
  // another sensor's).
  if (int(info.spec.wavelengths.size()) == ri.bands && int(ri.wavelengths.size()) == ri.bands) {
    std::string trained;
    for (double w : info.spec.wavelengths) trained += (trained.empty() ? "" : ", ") + number(w);
    for (int b = 0; b < ri.bands; ++b) {
      const double w = info.spec.wavelengths[size_t(b)], r = ri.wavelengths[size_t(b)];
      if (std::abs(r - w) > std::max(0.05, 0.1 * w)) {
        mismatch("band " + std::to_string(b + 1) + " of '" + o.input + "' is at " + number(r) +
                     " micrometres (its metadata) but the model's band " + std::to_string(b + 1) + " was at " +
                     number(w) + " (the model's bands: " + trained + ")",
                 "give the raster's bands in the model's order (gdal_translate -b), or train on such imagery");
        break;
      }
    }
  }

  // The pixel size, in metres where both CRSs say their units (degrees between geographic ones).
  const io::CrsUnits raster_units = io::crsUnits(ri.crs_wkt), model_units = io::crsUnits(info.crs_wkt);
  const bool units_known = !raster_units.name.empty() && !model_units.name.empty();
  if (units_known && raster_units.geographic != model_units.geographic) {
    mismatch("'" + o.input + "' is in a CRS in " + plural(raster_units.name) +
                 " but the model was trained on imagery in " + plural(model_units.name),
             "reproject the raster to a CRS in " + plural(model_units.name) +
                 " like the training data's (gdalwarp -t_srs)");
  } else if (info.pixel_size_x > 0 && std::abs(ri.geotransform[1]) > 0 && !o.resample) {
    double pixel = std::abs(ri.geotransform[1]), trained = info.pixel_size_x;
    std::string unit = "map units";
    if (units_known && !raster_units.geographic) {
      pixel *= raster_units.metres;
      trained *= model_units.metres;
      unit = "m";
    } else if (units_known) {
      unit = "degrees";
    }
    const double ratio = std::max(pixel / trained, trained / pixel);
    const std::string sizes = "'" + o.input + "' has pixels of " + number(pixel) + " " + unit +
                              " but the model was trained on pixels of " + number(trained) + " " + unit;
    if (units_known && ratio > 2)
      mismatch(sizes + " (" + number(ratio) + " times " + (pixel > trained ? "larger" : "smaller") +
                   "): objects would not have the sizes it learned",
               "set " + classifyOptionNamed("resample") + " to classify it at the model's pixel size, resample it to " +
                   number(trained) + " " + unit + " yourself (gdalwarp -tr) or train on such imagery");
    else if (ratio > 1.5)
      result.warnings.push_back(sizes + ": results may be poor at another scale");
  }

  // Values far outside the trained range: another scaling (16-bit reflectance for a model of
  // 8-bit imagery, a product of another processing level). More than 4 trained spans beyond it.
  if (int(info.band_min.size()) == ri.bands && int(info.band_max.size()) == ri.bands) {
    const auto ranges = io::approximateValueRange(o.input);
    for (int b = 0; b < ri.bands; ++b) {
      const double lo = info.band_min[size_t(b)], hi = info.band_max[size_t(b)], span = hi - lo;
      const double vlo = ranges[size_t(b)][0], vhi = ranges[size_t(b)][1];
      if (!(span > 0) || std::isnan(vlo) || std::isnan(vhi)) continue;
      if (vhi > hi + 4 * span || vlo < lo - 4 * span) {
        mismatch("band " + std::to_string(b + 1) + " of '" + o.input + "' has values from " + number(vlo) + " to " +
                     number(vhi) + " (GDAL's approximate statistics) but the model was trained on " + number(lo) +
                     " to " + number(hi) + " in that band: the imagery is scaled otherwise (another sensor, "
                     "product or bit depth)",
                 "rescale the raster to the training data's values or train on such imagery");
        break;
      }
    }
  }
}

// With resample: the raster read through a view of it at the model's pixel size (none when
// its pixels are within 1% of the model's already), the raster kept for the outputs' grid.
void resampleToModel(const ClassifyOptions& o, RunPlan& run, bool log, Progress& progress) {
  if (!o.resample) return;
  const io::RasterInfo& ri = run.reader->info();
  const ModelInfo& info = run.predictor.info;
  const auto& gt = ri.geotransform;
  const std::string unset = "; classify it without " + classifyOptionNamed("resample");
  if (!(info.pixel_size_x > 0))
    throw InputError("the model file '" + o.model_path + "' does not record the pixel size of its training data "
                     "(a TorchScript model, or a file older than that record), so there is no pixel size to "
                     "resample '" + o.input + "' to; resample it yourself (gdalwarp -tr)" + unset);
  if (gt[2] != 0 || gt[4] != 0)
    throw InputError("resampling needs a north-up raster and '" + o.input +
                     "' is rotated; warp it north-up first (gdalwarp)" + unset);
  const io::CrsUnits raster_units = io::crsUnits(ri.crs_wkt), model_units = io::crsUnits(info.crs_wkt);
  if (raster_units.name.empty() || model_units.name.empty())
    throw InputError("resampling to the model's pixel size needs the units of both CRSs, but " +
                     std::string(raster_units.name.empty() ? "'" + o.input + "'" : "the model's training data") +
                     " has no CRS PROJ reads; give the raster its CRS (gdal_edit -a_srs)" + unset);
  if (raster_units.geographic != model_units.geographic)
    throw InputError("'" + o.input + "' is in a CRS in " + plural(raster_units.name) +
                     " and the model was trained in " + plural(model_units.name) +
                     ": pixel sizes in the two do not compare; reproject the raster (gdalwarp -t_srs) instead of "
                     "resampling it");
  const double scale = raster_units.geographic ? 1.0 : model_units.metres / raster_units.metres;
  const double trained_x = info.pixel_size_x * scale;
  const double trained_y = (info.pixel_size_y > 0 ? info.pixel_size_y : info.pixel_size_x) * scale;
  const double fx = ri.width * std::abs(gt[1]) / trained_x, fy = ri.height * std::abs(gt[5]) / trained_y;
  if (!(fx < 1e6 && fy < 1e6))
    throw InputError("resampling '" + o.input + "' to the model's pixels of " + number(trained_x) +
                     " would make a view of " + number(fx) + " x " + number(fy) + " pixels; check the CRS of the "
                     "raster and of the model's training data" + unset);
  const int width = std::max(1, int(std::lround(fx))), height = std::max(1, int(std::lround(fy)));
  const std::string unit = raster_units.geographic ? "degrees" : plural(raster_units.name);
  if (std::abs(width - ri.width) <= ri.width / 100 && std::abs(height - ri.height) <= ri.height / 100) {
    if (log)
      progress.log("'" + o.input + "' is at the model's pixel size (" + number(trained_x) + " " + unit +
                   ", within 1%): not resampled");
    return;
  }
  run.input = std::move(run.reader);
  run.view = std::make_unique<io::ResampledView>(o.input, width, height);
  run.reader = std::make_unique<io::RasterReader>(run.view->path());
  if (log)
    progress.log("resampled to the model's pixel size (" + std::string(run.view->method()) + "): " +
                 std::to_string(ri.width) + " x " + std::to_string(ri.height) + " pixels of " +
                 number(std::abs(gt[1])) + " " + unit + " classified as " + std::to_string(width) + " x " +
                 std::to_string(height) + " of " + number(ri.width * std::abs(gt[1]) / width) +
                 "; the outputs at the raster's grid");
}

// A batch's inputs and probabilities and the blend weights alone must fit the memory budget:
// an absurd window is refused with the largest that fits, before anything is allocated.
void checkWindowMemory(const ClassifyOptions& o, const TileJob& job, int bands, const std::string& device_name) {
  const double budget_mib = o.run.memory_budget_mib > 0 ? o.run.memory_budget_mib : defaultMemoryBudgetMiB(device_name);
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
  return (o.run.memory_budget_mib > 0 ? o.run.memory_budget_mib : defaultMemoryBudgetMiB(device_name)) * 1024.0 * 1024.0;
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

std::string classifyOptionNamed(const std::string& name) {
  for (const auto& option : classifyOptionTable())
    if (option.name == name) return optionOrigin(option);
  throw std::logic_error("classify declares no " + name);
}

double computedRatio(const TileJob& job, int64_t computed) {
  const PixelRect& a = job.area;
  return computedPerOutputPixel(job.plan, computed, int64_t(a.x1 - a.x0) * (a.y1 - a.y0));
}

void planWindows(const ClassifyOptions& o, int window, RunPlan& run) {
  const io::RasterInfo& ri = run.reader->info();
  const ModelInfo& info = run.predictor.info;
  TileJob& job = run.job;
  const int overlap = o.overlap >= 0 ? overlapPixels(window, o.overlap) : automaticOverlap(info.sample_size, window);
  job.plan = planTiles(ri.width, ri.height, window, overlap);
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

namespace {

// A .vrt class raster is written in parts by every rank (io/parts_vrt.h): its probabilities
// too, and neither as one Cloud Optimized GeoTIFF nor through a resampled view (those make
// one file on one rank).
void checkPartOutputs(const ClassifyOptions& o) {
  const bool vrt = io::isVrtPath(o.output);
  if (!o.probabilities.empty() && io::isVrtPath(o.probabilities) != vrt)
    throw InputError(vrt ? "the class raster is a VRT written in parts by every rank, and so is the probability "
                           "raster: give it a .vrt name too (got '" + o.probabilities + "')"
                         : "the probability raster is a VRT, which GeoDL writes only beside a class raster that is "
                           "one: give the class raster a .vrt name, or the probabilities a .tif name (got '" +
                               o.probabilities + "')");
  if (!vrt) return;
  if (o.cog)
    throw InputError("cog writes one Cloud Optimized GeoTIFF, but '" + o.output +
                     "' is a VRT over parts written in place: give a .tif output for a COG, or make one from the "
                     "VRT afterwards (gdal_translate -of COG " + o.output + " OUT.tif)");
  if (o.resample)
    throw InputError("resample writes the outputs at the raster's grid from the model's on one rank, which a VRT "
                     "over parts written in place cannot be: give a .tif output with resample");
  io::checkReplaceableParts(o.output, "the class raster");
  if (!o.probabilities.empty()) io::checkReplaceableParts(o.probabilities, "the probability raster");
}

}  // namespace

// Checks, model, raster and plan: when any rank fails here (a file missing on one machine),
// every rank stops at once with its message.
void planRun(const ClassifyOptions& o, DataParallel& ranks, Progress& progress, RunPlan& run) {
  ranks.together([&] {
    if (o.output.empty()) throw InputError("no output raster given");
    ClassifyJob as_job;  // the table is the job's: its fields of one run checked
    as_job.options = o;
    checkOptions(classifyOptionTable(), as_job);
    run.folders.create(o.output);
    if (!o.probabilities.empty()) run.folders.create(o.probabilities);
    if (!o.polygons.empty()) run.folders.create(o.polygons);
    for (const auto& line : checkJobFiles(classifyOutputs(o),
                                          {{"the input raster", o.input}, {"the model file", o.model_path},
                                           {"the model's sidecar", o.sidecar}, {"the mask", o.mask}},
                                          ranks.writes() ? &run.locks : nullptr))
      if (ranks.writes()) progress.log(line);
    // The formats after the files (an output over an input is named as such first).
    checkOutputExtension(o.output, io::rasterOutputKind(o.output), "the class raster");
    checkPartOutputs(o);
    checkOutputExtension(o.probabilities, io::rasterOutputKind(o.probabilities), "the probability raster");
    checkOutputExtension(o.polygons, FileKind::GeoPackage, "the polygon file");

    // 1. The model, the raster, and whether they fit each other.
    run.predictor = loadPredictor(o.model_path, o.sidecar);
    run.reader = std::make_unique<io::RasterReader>(o.input);
    ClassifyResult fits;
    fits.warnings = run.predictor.warnings;
    checkModelFits(o, run.predictor.info, run.reader->info(), fits);
    run.warnings = fits.warnings;
    if (ranks.writes())
      for (const auto& w : run.warnings) progress.log("warning: " + w);
    resampleToModel(o, run, ranks.writes(), progress);

    // 2. The device and precision; the plan: windows, extent, mask, batch size.
    const io::RasterInfo& ri = run.reader->info();
    run.device_name = resolveDevice(o.run.device);
    run.precision = resolvePrecision(o.run.precision, run.device_name);
    configureThreads(o.run.threads);
    configureCudnn(run.device_name, /*deterministic=*/true);  // two runs on one GPU: the same bytes
    run.predictor.to(torch::Device(run.device_name));
    if (run.precision != "fp32") {
      run.type = run.precision == "bf16" ? torch::kBFloat16 : torch::kHalf;
      run.predictor.cast(run.type);  // once: the weights in bfloat16 (or float16, on a GPU)
      if (ranks.writes())
        progress.log("precision " + run.precision + " (" +
                     (run.device_name == "cpu" ? cpuBf16Instructions() : run.device_name) + ")");
    }
    planWindows(o, chooseWindow(o, run.predictor, run.device_name, ri, run.type, progress), run);
    TileJob& job = run.job;
    checkWindowMemory(o, job, ri.bands, run.device_name);
    torch::NoGradGuard no_grad;
    job.batch_size =
        chooseBatchSize(o, run.predictor, run.device_name, ri.bands, job.plan.window, run.type, progress);
  });
}


}  // namespace geodl
