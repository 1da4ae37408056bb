#include "core/tile_classifier.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <exception>
#include <future>
#include <mutex>
#include <thread>

#include "base/errors.h"
#include "core/device.h"

namespace geodl {

namespace {

struct WindowBatch {
  size_t row = 0;        // index into the plan's rows
  std::vector<int> xs;   // window origins in this batch (empty: a row without windows)
  torch::Tensor images;  // (n, bands, window, window), normalized
  std::vector<torch::Tensor> masks;
  bool row_end = false;  // the row's last batch
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

// Reads the job's windows in a thread of its own, two batches ahead of the model; in pinned
// memory for a GPU (copied without waiting).
class WindowReader {
 public:
  WindowReader(const TileSource& source, const TileJob& job, bool pinned) : queue_(2), pinned_(pinned) {
    thread_ = std::thread([this, &source, &job] {
      try {
        read(source, job);
      } catch (...) {
        queue_.fail(std::current_exception());
      }
    });
  }
  ~WindowReader() {
    queue_.stop();
    if (thread_.joinable()) thread_.join();
  }
  WindowBatch next() { return queue_.pop(); }

 private:
  void read(const TileSource& source, const TileJob& job) {
    const int window = job.plan.window;
    for (size_t k = size_t(job.band.first_row); k < size_t(job.band.end(job.plan)); ++k) {
      const std::vector<int>& xs = job.row_windows[k];
      // A block resumed part way: its windows from the part's on (whole batches from the row's
      // first, as before the stop).
      const size_t skip = job.start_part && int(k) == job.band.first_block ? size_t(job.start_part->windows) : 0;
      if (xs.size() <= skip && !queue_.push({k, {}, {}, {}, true})) return;
      for (size_t start = skip; start < xs.size(); start += size_t(job.batch_size)) {
        WindowBatch item;
        item.row = k;
        const size_t n = std::min(xs.size() - start, size_t(job.batch_size));
        item.xs.assign(xs.begin() + long(start), xs.begin() + long(start + n));
        item.row_end = start + n == xs.size();
        item.images = torch::empty({int64_t(n), source.bands(), window, window},
                                   torch::TensorOptions().pinned_memory(pinned_));
        for (size_t i = 0; i < n; ++i) {
          auto mask = torch::zeros({window, window}, torch::kUInt8);
          source.readWindow(item.xs[i], job.plan.ys[k], window, item.images[int64_t(i)].data_ptr<float>(),
                            mask.data_ptr<uint8_t>());
          item.masks.push_back(mask);
        }
        if (!queue_.push(std::move(item))) return;
      }
    }
  }

  WindowQueue queue_;
  bool pinned_;
  std::thread thread_;
};

// A batch whose probabilities are on their way to the CPU: `probs` (float) holds them once
// `copied` is reached.
struct LaunchedBatch {
  WindowBatch item;
  torch::Tensor probs;
  DeviceFence copied;
};

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
  // Whether the previous write is done (a new one would not wait).
  bool idle() const {
    return !pending_.valid() || pending_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  }

 private:
  std::future<void> pending_;
};

// Columns classified at a time when rows are final: bounds the temporaries on wide rasters.
constexpr int kColumnChunk = 2048;

// The weighted sums of the window probabilities over the rows that windows still touch
// (a window's height of rows from `top`), and where a valid pixel contributed.
class RowBlender {
 public:
  // Rows from `top` (a band's first computed row).
  RowBlender(const TilePlan& plan, int classes, int top)
      : width_(plan.width), height_(plan.height), window_(plan.window), rows_(std::min(plan.window, plan.height)),
        weights_(torch::from_blob(blendWeights(plan.window, plan.overlap).data(), {plan.window, plan.window},
                                  torch::kFloat).clone()),
        acc_(torch::zeros({classes, rows_, width_})),
        acc_w_(torch::zeros({rows_, width_})),
        acc_valid_(torch::zeros({rows_, width_}, torch::kUInt8)),
        top_(top) {}

  int top() const { return top_; }

  // One window's probabilities (classes x window x window) and valid mask at (x0, y0).
  void add(int x0, int y0, const torch::Tensor& probs, const torch::Tensor& valid) {
    const int w = std::min(window_, width_ - x0), h = std::min(window_, height_ - y0);
    const int r0 = y0 - top_;
    acc_.narrow(1, r0, h).narrow(2, x0, w) += (probs * weights_).narrow(1, 0, h).narrow(2, 0, w);
    acc_w_.narrow(0, r0, h).narrow(1, x0, w) += weights_.narrow(0, 0, h).narrow(1, 0, w);
    auto v = acc_valid_.narrow(0, r0, h).narrow(1, x0, w);
    v.copy_(v.__or__(valid.narrow(0, 0, h).narrow(1, 0, w)));
  }

  // The blended probabilities (classes x n x cw) of the first n rows, columns [c0, c0 + cw),
  // and where they were computed from a valid pixel (n x cw).
  torch::Tensor probabilities(int n, int c0, int cw) const {
    auto w = acc_w_.narrow(0, 0, n).narrow(1, c0, cw);
    return acc_.narrow(1, 0, n).narrow(2, c0, cw) / w.clamp_min(1e-12).unsqueeze(0);
  }
  torch::Tensor computed(int n, int c0, int cw) const {
    return (acc_w_.narrow(0, 0, n).narrow(1, c0, cw) > 0) & (acc_valid_.narrow(0, 0, n).narrow(1, c0, cw) > 0);
  }

  // The rows from top() of the raster the blend covers (a part's).
  int blendRows() const { return std::max(0, std::min(rows_, height_ - top_)); }
  // How many rows from top() a carry holds: those slide() kept (the overlap), of the raster; the
  // rows below hold nothing yet.
  int carryRows() const { return std::min(kept_, blendRows()); }
  // The carry into the rows from top() (after slide()): copies of what the blend holds.
  BlendCarry carry() const {
    BlendCarry c;
    c.y = top_;
    c.rows = carryRows();
    c.width = width_;
    c.classes = int(acc_.size(0));
    copyOut(c.rows, 0, width_, c.sums, c.weights, c.valid);
    return c;
  }
  // Restores a carry taken at the same top.
  void restore(const BlendCarry& c) { copyIn(c.rows, 0, width_, c.sums, c.weights, c.valid); }

  // Columns [p.x0, p.x1) of the rows the blend covers: copies of what it holds (BlockPart).
  void part(BlockPart& p) const {
    p.y = top_;
    p.rows = blendRows();
    p.width = width_;
    p.classes = int(acc_.size(0));
    copyOut(p.rows, p.x0, p.x1 - p.x0, p.sums, p.weights, p.valid);
  }
  // Restores a part taken at the same top, over its columns.
  void restore(const BlockPart& p) { copyIn(p.rows, p.x0, p.x1 - p.x0, p.sums, p.weights, p.valid); }

  // The first rows, up to next_y, are done: the rest moves up.
  void slide(int next_y) {
    const int n = next_y - top_;
    const int keep = rows_ - n;
    kept_ = std::max(0, keep);
    if (keep > 0) {
      acc_.narrow(1, 0, keep).copy_(acc_.narrow(1, n, keep).clone());
      acc_w_.narrow(0, 0, keep).copy_(acc_w_.narrow(0, n, keep).clone());
      acc_valid_.narrow(0, 0, keep).copy_(acc_valid_.narrow(0, n, keep).clone());
    }
    acc_.narrow(1, std::max(keep, 0), rows_ - std::max(keep, 0)).zero_();
    acc_w_.narrow(0, std::max(keep, 0), rows_ - std::max(keep, 0)).zero_();
    acc_valid_.narrow(0, std::max(keep, 0), rows_ - std::max(keep, 0)).zero_();
    top_ = next_y;
  }

 private:
  // Rows [0, rows) and columns [x0, x0 + n) of the sums (classes x rows x n), the weights and
  // the valid flags (rows x n), copied out of the blend, or into it.
  void copyOut(int rows, int x0, int n, std::vector<float>& sums, std::vector<float>& weights,
               std::vector<uint8_t>& valid) const {
    const auto copy = [](const torch::Tensor& t, auto& out) {
      const auto flat = t.contiguous();
      using T = typename std::decay_t<decltype(out)>::value_type;
      out.assign(flat.data_ptr<T>(), flat.data_ptr<T>() + flat.numel());
    };
    copy(acc_.narrow(1, 0, rows).narrow(2, x0, n), sums);
    copy(acc_w_.narrow(0, 0, rows).narrow(1, x0, n), weights);
    copy(acc_valid_.narrow(0, 0, rows).narrow(1, x0, n), valid);
  }
  void copyIn(int rows, int x0, int n, const std::vector<float>& sums, const std::vector<float>& weights,
              const std::vector<uint8_t>& valid) {
    const int64_t classes = acc_.size(0);
    acc_.narrow(1, 0, rows).narrow(2, x0, n).copy_(
        torch::from_blob(const_cast<float*>(sums.data()), {classes, rows, n}));
    acc_w_.narrow(0, 0, rows).narrow(1, x0, n).copy_(torch::from_blob(const_cast<float*>(weights.data()), {rows, n}));
    acc_valid_.narrow(0, 0, rows).narrow(1, x0, n).copy_(
        torch::from_blob(const_cast<uint8_t*>(valid.data()), {rows, n}, torch::kUInt8));
  }

  int width_, height_, window_, rows_;
  torch::Tensor weights_, acc_, acc_w_, acc_valid_;
  int top_;
  int kept_ = 0;  // the rows from top_ the last slide() kept: below them the blend holds nothing
};

struct FinalRows {
  torch::Tensor ids;    // (n, width) uint8
  torch::Tensor probs;  // (classes, n, width), or undefined
};

// The classes (and probabilities) of the first n rows, nodata outside the area and the mask,
// in column chunks so that the temporaries stay small on wide rasters; counts into `result`.
FinalRows finishRows(const RowBlender& blender, const TileJob& job, int n, ProbabilityType type, TileResult& result) {
  const int width = job.plan.width, classes = job.classes, y = blender.top();
  FinalRows rows;
  rows.ids = torch::empty({n, width}, torch::kUInt8);
  if (type != ProbabilityType::None)
    rows.probs = torch::empty({classes, n, width}, type == ProbabilityType::Float32 ? torch::kFloat : torch::kUInt8);
  const int ia = std::max(job.area.y0, y) - y, ib = std::min(job.area.y1, y + n) - y;
  torch::Tensor in_mask;  // (n, width): 1 inside the mask's polygons
  std::vector<uint8_t> strip;
  if (job.inside) {
    job.inside(y, n, strip);
    in_mask = torch::from_blob(strip.data(), {n, width}, torch::kUInt8);
  }
  const auto ids_of = torch::from_blob(const_cast<uint8_t*>(job.class_ids.data()), {classes}, torch::kUInt8);
  for (int c0 = 0; c0 < width; c0 += kColumnChunk) {
    const int cw = std::min(kColumnChunk, width - c0);
    auto p = blender.probabilities(n, c0, cw);
    auto computed = blender.computed(n, c0, cw);
    const int ja = std::max(job.area.x0, c0) - c0, jb = std::min(job.area.x1, c0 + cw) - c0;
    auto inside = torch::zeros({n, cw}, torch::kBool);
    if (ib > ia && jb > ja) inside.narrow(0, ia, ib - ia).narrow(1, ja, jb - ja).fill_(true);
    computed = computed & inside;
    if (in_mask.defined()) computed = computed & (in_mask.narrow(1, c0, cw) > 0);
    auto index = p.argmax(0);
    rows.ids.narrow(1, c0, cw).copy_(torch::where(computed, ids_of.index({index}), torch::full({}, 255, torch::kUInt8)));
    auto counts = torch::bincount(index.masked_select(computed), {}, classes);
    for (int c = 0; c < classes; ++c) result.class_pixels[size_t(c)] += counts[c].item<int64_t>();
    result.nodata_pixels += int64_t(n) * cw - computed.sum().item<int64_t>();
    if (rows.probs.defined()) {
      auto masked = p * computed.unsqueeze(0);
      rows.probs.narrow(2, c0, cw).copy_(type == ProbabilityType::Float32
                                             ? masked
                                             : (masked * 255.0).round().clamp(0, 255).to(torch::kUInt8));
    }
  }
  return rows;
}

void checkShape(const torch::Tensor& probs, const TileJob& job) {
  const int window = job.plan.window;
  if (probs.dim() == 4 && probs.size(1) == job.classes && probs.size(2) == window && probs.size(3) == window)
    return;
  std::string shape;  // of one window: classes x height x width
  for (int64_t d = 1; d < probs.dim(); ++d) shape += (d > 1 ? " x " : "") + std::to_string(probs.size(d));
  throw InputError("the model gave an output of shape " + shape + " for windows of " + std::to_string(window) +
                   " pixels and " + std::to_string(job.classes) + " classes; check its sidecar");
}

}  // namespace

TileResult classifyTiles(const std::function<torch::Tensor(const torch::Tensor&)>& probabilities,
                         const TileSource& source, TileSink& sink, const TileJob& job, const torch::Device& device,
                         Progress& progress) {
  const TilePlan& plan = job.plan;
  TileResult result;
  result.class_pixels.assign(size_t(job.classes), 0);
  const size_t first = size_t(job.band.first_row), end = size_t(job.band.end(plan));
  int64_t to_compute = 0;
  for (size_t k = first; k < end; ++k) to_compute += int64_t(job.row_windows[k].size());
  if (job.start_part) {
    const BlockPart& p = *job.start_part;
    const size_t row = size_t(job.band.first_block);
    if (p.block != job.band.first_block || row >= end || p.windows <= 0 || p.windows % job.batch_size != 0 ||
        size_t(p.windows) >= job.row_windows[row].size() || p.y != plan.ys[row] || p.width != plan.width ||
        p.classes != job.classes || p.rows != std::min(plan.window, plan.height - p.y) || p.x0 != 0 ||
        p.x1 > plan.width || p.final_x > p.x1 ||
        p.sums.size() != size_t(p.classes) * size_t(p.rows) * size_t(p.x1) ||
        p.weights.size() != size_t(p.rows) * size_t(p.x1) || p.valid.size() != p.weights.size())
      throw Error("a part of block " + std::to_string(p.block) + " (" + std::to_string(p.windows) +
                  " windows) does not fit the band from block " + std::to_string(job.band.first_block) + ": a bug");
    to_compute -= p.windows;
  }
  const bool gpu = device.is_cuda();
  WindowReader reader(source, job, gpu);
  RowBlender blender(plan, job.classes, first < plan.ys.size() ? plan.ys[first] : 0);
  if (job.start_carry) {
    const BlendCarry& c = *job.start_carry;
    if (c.y != blender.top() || c.width != plan.width || c.classes != job.classes || c.rows > blender.blendRows())
      throw Error("a blend carry of rows " + std::to_string(c.y) + "+ does not fit the band from row " +
                  std::to_string(blender.top()) + ": a bug");
    blender.restore(c);
  }
  const bool carries = sink.keepsCarry();
  const int parts = sink.partsPerBlock();
  // Writing runs in a thread of its own, one block of rows at a time, overlapping the model.
  RowWriter writer;
  // The model's work on a batch, queued: on a GPU it runs while the CPU blends the batch
  // before (the copy back waits on a fence, not on the whole queue).
  const auto launch = [&](WindowBatch item) {
    LaunchedBatch b{std::move(item), {}, {}};
    if (b.item.xs.empty()) return b;
    const auto probs = probabilities(b.item.images.to(device, /*non_blocking=*/true));
    checkShape(probs, job);
    if (!gpu) {
      b.probs = probs.to(torch::kFloat);
      return b;
    }
    b.probs = torch::empty(probs.sizes(), torch::TensorOptions().dtype(torch::kFloat).pinned_memory(true));
    b.probs.copy_(probs.to(torch::kFloat), /*non_blocking=*/true);
    b.copied.mark(device.str());
    return b;
  };
  const size_t depth = gpu || job.compute_ahead ? 2 : 1;  // batches launched, the one blended included
  std::deque<LaunchedBatch> launched;
  size_t rows_read = first;
  for (size_t k = first; k < end; ++k) {
    const std::vector<int>& xs = job.row_windows[k];
    const bool own = int(k) >= job.band.first_block;
    // Parts of the block (sink.part()): each once a share of the row's windows is blended since
    // the previous, at the end of a batch, when the writing thread is idle.
    size_t in_row = 0;
    int part_x = 0;
    if (own && int(k) == job.band.first_block && job.start_part) {
      blender.restore(*job.start_part);
      in_row = size_t(job.start_part->windows);
      part_x = job.start_part->final_x;
    }
    const size_t part_step = std::clamp<size_t>(xs.size() / size_t(parts + 1), 1,
                                                size_t(std::max(1, kMostWindowsPerPart - job.batch_size + 1)));
    size_t next_part = parts > 0 && own ? in_row + part_step : xs.size();
    for (bool row_done = false; !row_done;) {
      while (launched.size() < depth && rows_read < end) {
        progress.checkCancelled();
        WindowBatch item = reader.next();
        if (item.row_end) ++rows_read;
        launched.push_back(launch(std::move(item)));
      }
      LaunchedBatch b = std::move(launched.front());
      launched.pop_front();
      row_done = b.item.row_end;
      if (b.item.xs.empty()) continue;
      b.copied.wait();
      for (size_t i = 0; i < b.item.xs.size(); ++i) {
        blender.add(b.item.xs[i], plan.ys[k], b.probs[int64_t(i)], b.item.masks[i]);
        ++result.windows_computed;
        progress.report(double(result.windows_computed) / double(std::max<int64_t>(1, to_compute)),
                        "window " + std::to_string(result.windows_computed) + "/" + std::to_string(to_compute));
      }
      in_row += b.item.xs.size();
      if (!row_done && in_row >= next_part && (job.parts_wait || writer.idle())) {
        auto p = std::make_shared<BlockPart>();
        p->block = int(k);
        p->windows = int(in_row);
        p->x0 = part_x;
        // The columns the row's windows done reach, and those its windows left do not.
        p->final_x = *std::min_element(xs.begin() + long(in_row), xs.end());
        p->x1 = std::max(std::min(plan.width, *std::max_element(xs.begin(), xs.begin() + long(in_row)) + plan.window),
                         p->final_x);
        blender.part(*p);
        part_x = p->final_x;
        next_part = in_row + part_step;
        writer.write([&sink, p] { sink.part(*p); });
      }
    }
    // Rows no later window touches are final: classify them, hand them to the writing
    // thread, and slide.
    const int next_y = k + 1 < plan.ys.size() ? plan.ys[k + 1] : plan.height;
    const int n = next_y - blender.top();
    if (n <= 0) continue;
    if (int(k) < job.band.first_block) {  // the neighbour's rows, computed for the blend only
      blender.slide(next_y);
      continue;
    }
    FinalRows rows = finishRows(blender, job, n, sink.probabilities(), result);
    const int y = blender.top();
    blender.slide(next_y);
    std::shared_ptr<BlendCarry> carry;
    if (carries && k + 1 < plan.ys.size()) carry = std::make_shared<BlendCarry>(blender.carry());
    writer.write([&sink, rows, y, n, k, carry] {
      if (carry) sink.carry(int(k), *carry);
      sink.writeRows(y, n, rows.ids.data_ptr<uint8_t>(), rows.probs.defined() ? rows.probs.data_ptr() : nullptr);
    });
  }
  writer.finish();
  return result;
}

}  // namespace geodl
