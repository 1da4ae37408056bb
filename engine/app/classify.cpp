#include "app/classify.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

#include "core/atomic_file.h"
#include "core/device.h"
#include "core/memory.h"
#include "core/errors.h"
#include "core/model_file.h"
#include "core/tile_plan.h"
#include "io/geotiff_writer.h"
#include "io/labels.h"
#include "io/polygonize.h"
#include "io/raster.h"

namespace geodl {

namespace {

// Mirror index into [0, n) (reflection without repeating the edge pixel).
int reflect(int v, int n) {
  if (n == 1) return 0;
  const int period = 2 * n - 2;
  v = std::abs(v) % period;
  return v >= n ? period - v : v;
}

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

struct PixelRect {
  int x0, y0, x1, y1;  // [x0, x1) x [y0, y1)
};

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

// One window's pixels, normalized, band by band (bands x window x window), edges mirrored;
// mask: 1 where the pixel is inside the raster and not nodata.
void readWindow(const io::RasterReader& reader, int x0, int y0, int window, const ModelInfo& info,
                std::vector<double>& values, std::vector<uint8_t>& valid, float* out, uint8_t* mask) {
  const int width = reader.info().width, height = reader.info().height, bands = reader.info().bands;
  // The pixels the window needs: read their bounding box once.
  int sx0 = width, sx1 = 0, sy0 = height, sy1 = 0;
  for (int d = 0; d < window; ++d) {
    sx0 = std::min(sx0, reflect(x0 + d, width));
    sx1 = std::max(sx1, reflect(x0 + d, width) + 1);
    sy0 = std::min(sy0, reflect(y0 + d, height));
    sy1 = std::max(sy1, reflect(y0 + d, height) + 1);
  }
  const int rw = sx1 - sx0;
  reader.read(sx0, sy0, rw, sy1 - sy0, values, valid);
  std::vector<float> scale(bands), offset(bands);
  for (int b = 0; b < bands; ++b) {
    scale[b] = float(1.0 / info.band_std[b]);
    offset[b] = float(-info.band_mean[b] / info.band_std[b]);
  }
  for (int r = 0; r < window; ++r) {
    const int sy = reflect(y0 + r, height) - sy0;
    for (int c = 0; c < window; ++c) {
      const int sx = reflect(x0 + c, width) - sx0;
      const size_t src = size_t(sy) * rw + sx;
      const bool ok = valid[src] != 0;
      mask[r * window + c] = ok;
      for (int b = 0; b < bands; ++b)
        out[(size_t(b) * window + r) * window + c] = ok ? float(values[src * bands + b]) * scale[b] + offset[b] : 0.0f;
    }
  }
}

struct WindowBatch {
  size_t row = 0;          // index into the plan's rows
  std::vector<int> xs;     // window origins in this batch (empty: a row without windows)
  torch::Tensor images;    // (n, bands, window, window), normalized
  std::vector<torch::Tensor> masks;
  bool row_end = false;    // the row's last batch
};

// A bounded queue between the reading thread and the model.
class WindowQueue {
 public:
  explicit WindowQueue(size_t capacity) : capacity_(capacity) {}
  bool push(WindowBatch item) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return stopped_ || items_.size() < capacity_; });
    if (stopped_) return false;
    items_.push_back(std::move(item));
    changed_.notify_all();
    return true;
  }
  WindowBatch pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return error_ || !items_.empty(); });
    if (items_.empty()) std::rethrow_exception(error_);
    WindowBatch item = std::move(items_.front());
    items_.pop_front();
    changed_.notify_all();
    return item;
  }
  void fail(std::exception_ptr error) {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = error;
    changed_.notify_all();
  }
  void stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    changed_.notify_all();
  }

 private:
  size_t capacity_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<WindowBatch> items_;
  std::exception_ptr error_;
  bool stopped_ = false;
};

// Columns classified at a time when rows are final: bounds the temporaries on wide rasters.
constexpr int kColumnChunk = 2048;

// Runs writes in a thread, one at a time, in order: a new write waits for the previous one,
// whose error (if any) it rethrows.
class RowWriter {
 public:
  ~RowWriter() {
    if (pending_.valid()) pending_.wait();
  }
  void write(std::function<void()> job) {
    finish();
    pending_ = std::async(std::launch::async, std::move(job));
  }
  void finish() {
    if (pending_.valid()) pending_.get();
  }

 private:
  std::future<void> pending_;
};

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

}  // namespace

ClassifyResult classify(const ClassifyOptions& o, Progress& progress) {
  CpuMemoryScope memory;  // reused blocks for the batches of windows
  if (o.output.empty()) throw InputError("no output raster given");
  if (o.batch_size < 0) throw InputError("the batch size must be at least 1 (0: automatic)");
  if (o.min_area < 0) throw InputError("the minimum polygon area cannot be negative");
  if (!o.polygons.empty())
    checkWritableFolder(std::filesystem::absolute(o.polygons).parent_path().string());
  const Predictor predictor = loadPredictor(o.model_path, o.sidecar);
  const ModelInfo& info = predictor.info;
  const io::RasterReader reader(o.input);
  const io::RasterInfo& ri = reader.info();
  ClassifyResult result;
  if (ri.bands != info.spec.bands)
    throw InputError("'" + o.input + "' has " + std::to_string(ri.bands) + " bands but the model " +
                     "expects " + std::to_string(info.spec.bands) + " (" + info.data_type +
                     "), as in its training data; give a raster with the same bands");
  if (!typeFits(ri.data_type, info.data_type))
    throw InputError("'" + o.input + "' holds " + ri.data_type + " pixels but the model was trained " +
                     "on " + info.data_type + " ones: their values would not mean the same; "
                     "convert the raster to " + info.data_type + " or train on such data");
  if (ri.crs_wkt.empty())
    result.warnings.push_back("'" + o.input + "' has no CRS: classified anyway; the output has no "
                              "CRS either");
  const double pixel = std::abs(ri.geotransform[1]);
  if (info.pixel_size_x > 0 && pixel > 0 &&
      (pixel / info.pixel_size_x > 1.5 || info.pixel_size_x / pixel > 1.5)) {
    std::ostringstream msg;
    msg << "'" << o.input << "' has pixels of " << pixel << " map units but the model was trained "
        << "on pixels of " << info.pixel_size_x << ": results may be poor at another scale";
    result.warnings.push_back(msg.str());
  }
  for (const auto& w : result.warnings) progress.log("warning: " + w);

  const int window = o.window > 0 ? o.window : info.sample_size;
  const TilePlan plan = planTiles(ri.width, ri.height, window, o.overlap);
  const PixelRect area = extentToPixels(o, ri);
  const int classes = info.spec.classes, width = ri.width, height = ri.height, bands = ri.bands;
  result.width = width;
  result.height = height;
  result.windows = plan.windows();
  result.classes = info.classes;
  result.class_pixels.assign(size_t(classes), 0);

  const std::string device_name = resolveDevice(o.device);
  configureThreads(o.threads);
  const torch::Device device(device_name);
  predictor.to(device);
  torch::NoGradGuard no_grad;

  // Batch size 0: as many windows as fit the memory budget (forward peaks at 1 and 2
  // windows give the cost of one more).
  int batch_size = o.batch_size;
  if (batch_size == 0) {
    installCountingCpuAllocator();
    MemoryMeter meter(device_name);
    const auto peakOf = [&](int n) {
      meter.start();
      predict(predictor, torch::zeros({n, bands, window, window}, torch::TensorOptions().device(device)), o.tta);
      return double(meter.peak());
    };
    const double one = peakOf(1), two = peakOf(2), per = std::max(1.0, two - one);
    const double budget = (o.memory_budget_mib > 0 ? o.memory_budget_mib : defaultMemoryBudgetMiB(device_name)) *
                          1024.0 * 1024.0;
    batch_size = int(std::clamp((budget - (one - per)) / per, 1.0, 256.0));
    progress.log("batch size " + std::to_string(batch_size) + " (automatic: " +
                 std::to_string(int(per / (1024 * 1024))) + " MiB per window)");
  }
  result.batch_size = batch_size;

  // Outputs: opened now so that an unwritable path fails before any work.
  io::GeoTiffSpec spec;
  spec.width = width;
  spec.height = height;
  spec.geotransform = ri.geotransform;
  spec.crs_wkt = ri.crs_wkt;
  spec.has_nodata = true;
  spec.nodata = 255;
  spec.cog = o.cog;
  int max_id = 0;
  for (const auto& c : info.classes) max_id = std::max(max_id, c.id);
  spec.colours.assign(size_t(max_id + 1), "");
  spec.categories.assign(size_t(max_id + 1), "");
  for (const auto& c : info.classes) {
    spec.colours[size_t(c.id)] = c.colour;
    spec.categories[size_t(c.id)] = c.name;
  }
  spec.band_names = {"class"};
  io::GeoTiffWriter class_writer(o.output, spec);
  std::unique_ptr<io::GeoTiffWriter> prob_writer;
  if (!o.probabilities.empty()) {
    io::GeoTiffSpec p = spec;
    p.bands = classes;
    p.float32 = o.probabilities_float;
    p.has_nodata = false;
    p.colours.clear();
    p.categories.clear();
    p.band_names.clear();
    for (const auto& c : info.classes) p.band_names.push_back(c.name);
    prob_writer = std::make_unique<io::GeoTiffWriter>(o.probabilities, p);
  }

  std::vector<uint8_t> id_of(static_cast<size_t>(classes));
  for (int c = 0; c < classes; ++c) id_of[size_t(c)] = uint8_t(info.classes[size_t(c)].id);
  const auto weights = torch::from_blob(blendWeights(window, plan.overlap).data(), {window, window},
                                        torch::kFloat).clone();
  const int rows = std::min(window, height);
  auto acc = torch::zeros({classes, rows, width});
  auto acc_w = torch::zeros({rows, width});
  auto acc_valid = torch::zeros({rows, width}, torch::kUInt8);
  int acc_y0 = 0;

  // The windows to compute, row by row: those touching the extent and, with a mask, having
  // a pixel inside its polygons.
  std::unique_ptr<io::LabelRasterizer> mask;
  if (!o.mask.empty()) mask = std::make_unique<io::LabelRasterizer>(io::LabelSource{o.mask, o.mask_layer, "", {}}, ri, 255);
  std::vector<std::vector<int>> row_windows(plan.ys.size());
  {
    std::vector<uint8_t> inside;
    for (size_t k = 0; k < plan.ys.size(); ++k) {
      const int y0 = plan.ys[k], h = std::min(window, height - y0);
      for (int x0 : plan.xs) {
        if (!(x0 < area.x1 && x0 + window > area.x0 && y0 < area.y1 && y0 + window > area.y0)) continue;
        if (mask) {
          const int w = std::min(window, width - x0);
          mask->rasterize(x0, y0, w, h, inside);
          if (std::find(inside.begin(), inside.end(), uint8_t(1)) == inside.end()) continue;
        }
        row_windows[k].push_back(x0);
      }
    }
  }
  int64_t to_compute = 0;
  for (const auto& xs : row_windows) to_compute += int64_t(xs.size());
  // Reading runs ahead in a thread of its own (two batches), overlapping the model.
  WindowQueue queue(2);
  std::thread producer([&] {
    std::vector<double> values;
    std::vector<uint8_t> valid;
    try {
      for (size_t k = 0; k < plan.ys.size(); ++k) {
        const int y0 = plan.ys[k];
        const std::vector<int>& xs = row_windows[k];
        if (xs.empty() && !queue.push({k, {}, {}, {}, true})) return;
        for (size_t start = 0; start < xs.size(); start += size_t(batch_size)) {
          WindowBatch item;
          item.row = k;
          const size_t n = std::min(xs.size() - start, size_t(batch_size));
          item.xs.assign(xs.begin() + long(start), xs.begin() + long(start + n));
          item.row_end = start + n == xs.size();
          item.images = torch::empty({int64_t(n), bands, window, window});
          for (size_t i = 0; i < n; ++i) {
            auto mask = torch::zeros({window, window}, torch::kUInt8);
            readWindow(reader, item.xs[i], y0, window, info, values, valid,
                       item.images[int64_t(i)].data_ptr<float>(), mask.data_ptr<uint8_t>());
            item.masks.push_back(mask);
          }
          if (!queue.push(std::move(item))) return;
        }
      }
    } catch (...) {
      queue.fail(std::current_exception());
    }
  });
  struct Joiner {
    WindowQueue& q;
    std::thread& t;
    ~Joiner() {
      q.stop();
      if (t.joinable()) t.join();
    }
  } joiner{queue, producer};

  // Writing (compression included) runs in a thread of its own, one block of rows at a time,
  // overlapping the model. Declared after the writers: on an error it finishes first.
  RowWriter writer;
  int64_t done = 0;
  for (size_t k = 0; k < plan.ys.size(); ++k) {
    const int y0 = plan.ys[k];
    for (bool row_done = false; !row_done;) {
      progress.checkCancelled();
      WindowBatch item = queue.pop();
      row_done = item.row_end;
      if (item.xs.empty()) continue;
      const size_t n = item.xs.size();
      const auto probs = predict(predictor, item.images.to(device), o.tta).to(torch::kCPU).to(torch::kFloat);
      if (probs.size(1) != classes || probs.size(2) != window || probs.size(3) != window)
        throw InputError("the model gave an output of shape " + std::to_string(probs.size(1)) + " x " +
                         std::to_string(probs.size(2)) + " x " + std::to_string(probs.size(3)) +
                         " for windows of " + std::to_string(window) + " pixels and " +
                         std::to_string(classes) + " classes; check its sidecar");
      for (size_t i = 0; i < n; ++i) {
        const int x0 = item.xs[i];
        const int w = std::min(window, width - x0), h = std::min(window, height - y0);
        const int r0 = y0 - acc_y0;
        acc.narrow(1, r0, h).narrow(2, x0, w) +=
            (probs[int64_t(i)] * weights).narrow(1, 0, h).narrow(2, 0, w);
        acc_w.narrow(0, r0, h).narrow(1, x0, w) += weights.narrow(0, 0, h).narrow(1, 0, w);
        auto v = acc_valid.narrow(0, r0, h).narrow(1, x0, w);
        v.copy_(v.__or__(item.masks[i].narrow(0, 0, h).narrow(1, 0, w)));
        ++done;
        ++result.windows_computed;
        progress.report(double(done) / double(std::max<int64_t>(1, to_compute)),
                        "window " + std::to_string(done) + "/" + std::to_string(to_compute));
      }
    }
    // Rows no later window touches are final: classify them (in column chunks, so that the
    // temporaries stay small on wide rasters), hand them to the writing thread, and slide.
    const int next_y = k + 1 < plan.ys.size() ? plan.ys[k + 1] : height;
    const int n = next_y - acc_y0;
    if (n <= 0) continue;
    auto ids_rows = torch::empty({n, width}, torch::kUInt8);
    torch::Tensor prob_rows;
    if (prob_writer)
      prob_rows = torch::empty({classes, n, width}, o.probabilities_float ? torch::kFloat : torch::kUInt8);
    const int ia = std::max(area.y0, acc_y0) - acc_y0, ib = std::min(area.y1, next_y) - acc_y0;
    torch::Tensor in_mask;  // (n, width): 1 inside the mask's polygons
    if (mask) {
      std::vector<uint8_t> strip;
      mask->rasterize(0, acc_y0, width, n, strip);
      in_mask = torch::from_blob(strip.data(), {n, width}, torch::kUInt8).clone();
    }
    for (int c0 = 0; c0 < width; c0 += kColumnChunk) {
      const int cw = std::min(kColumnChunk, width - c0);
      auto w = acc_w.narrow(0, 0, n).narrow(1, c0, cw);
      auto p = acc.narrow(1, 0, n).narrow(2, c0, cw) / w.clamp_min(1e-12).unsqueeze(0);
      auto computed = (w > 0) & (acc_valid.narrow(0, 0, n).narrow(1, c0, cw) > 0);
      // Only the extent is classified.
      const int ja = std::max(area.x0, c0) - c0, jb = std::min(area.x1, c0 + cw) - c0;
      auto inside = torch::zeros({n, cw}, torch::kBool);
      if (ib > ia && jb > ja) inside.narrow(0, ia, ib - ia).narrow(1, ja, jb - ja).fill_(true);
      computed = computed & inside;
      if (mask) computed = computed & (in_mask.narrow(1, c0, cw) > 0);
      auto index = p.argmax(0);
      auto ids = torch::from_blob(id_of.data(), {classes}, torch::kUInt8).index({index});
      ids_rows.narrow(1, c0, cw).copy_(torch::where(computed, ids, torch::full({}, 255, torch::kUInt8)));
      auto counts = torch::bincount(index.masked_select(computed), {}, classes);
      for (int c = 0; c < classes; ++c) result.class_pixels[size_t(c)] += counts[c].item<int64_t>();
      result.nodata_pixels += int64_t(n) * cw - computed.sum().item<int64_t>();
      if (prob_writer) {
        auto masked = p * computed.unsqueeze(0);
        prob_rows.narrow(2, c0, cw).copy_(o.probabilities_float
                                              ? masked
                                              : (masked * 255.0).round().clamp(0, 255).to(torch::kUInt8));
      }
    }
    writer.write([&class_writer, &prob_writer, ids_rows, prob_rows, y = acc_y0, n] {
      class_writer.writeRows(y, n, ids_rows.data_ptr<uint8_t>());
      if (!prob_writer) return;
      if (prob_rows.scalar_type() == torch::kFloat)
        prob_writer->writeRows(y, n, prob_rows.data_ptr<float>());
      else
        prob_writer->writeRows(y, n, prob_rows.data_ptr<uint8_t>());
    });
    const int keep = rows - n;
    if (keep > 0) {
      acc.narrow(1, 0, keep).copy_(acc.narrow(1, n, keep).clone());
      acc_w.narrow(0, 0, keep).copy_(acc_w.narrow(0, n, keep).clone());
      acc_valid.narrow(0, 0, keep).copy_(acc_valid.narrow(0, n, keep).clone());
    }
    acc.narrow(1, std::max(keep, 0), rows - std::max(keep, 0)).zero_();
    acc_w.narrow(0, std::max(keep, 0), rows - std::max(keep, 0)).zero_();
    acc_valid.narrow(0, std::max(keep, 0), rows - std::max(keep, 0)).zero_();
    acc_y0 = next_y;
  }
  writer.finish();
  progress.checkCancelled();
  class_writer.commit();
  if (prob_writer) prob_writer->commit();
  if (!o.polygons.empty()) {
    progress.report(1.0, "polygons");
    const auto p = io::polygonizeClasses(o.output, o.polygons, spec.categories, o.min_area);
    result.polygons = p.polygons;
    result.polygons_dropped = p.dropped;
  }
  result.output = o.output;
  result.probabilities = o.probabilities;
  progress.report(1.0, "done");
  return result;
}

}  // namespace geodl
