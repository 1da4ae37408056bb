// Classification between a tile source and sink, without GDAL: tiled and blended equals the
// whole image for a model that looks at one pixel at a time; rows arrive in order, once;
// the extent and the mask become nodata; cancelling stops the threads.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <map>
#include <string>
#include <vector>

#include "base/errors.h"
#include "core/tile_classifier.h"

namespace geodl {
namespace {

constexpr int kBands = 2, kClasses = 3;

// An image in memory (bands x height x width, already normalized); zero past its edges.
class MemorySource : public TileSource {
 public:
  explicit MemorySource(torch::Tensor image) : image_(std::move(image)) {}
  int width() const override { return int(image_.size(2)); }
  int height() const override { return int(image_.size(1)); }
  int bands() const override { return int(image_.size(0)); }
  void readWindow(int x0, int y0, int window, float* out, uint8_t* valid) const override {
    auto a = image_.accessor<float, 3>();
    for (int r = 0; r < window; ++r)
      for (int c = 0; c < window; ++c) {
        const int y = y0 + r, x = x0 + c;
        const bool in = y < height() && x < width();
        valid[r * window + c] = in;
        for (int b = 0; b < bands(); ++b) out[(size_t(b) * window + r) * window + c] = in ? a[b][y][x] : 0.0f;
      }
  }

 private:
  torch::Tensor image_;
};

// Rows kept in memory, checked to come in order, each once.
class MemorySink : public TileSink {
 public:
  MemorySink(int width, int height, ProbabilityType type)
      : type_(type), ids(torch::full({height, width}, 7, torch::kUInt8)),
        probs(torch::zeros({kClasses, height, width})) {}
  ProbabilityType probabilities() const override { return type_; }
  void writeRows(int y, int n, const uint8_t* row_ids, const void* p) override {
    EXPECT_EQ(y, next_row) << "rows out of order";
    next_row = y + n;
    const int width = int(ids.size(1));
    ids.narrow(0, y, n).copy_(torch::from_blob(const_cast<uint8_t*>(row_ids), {n, width}, torch::kUInt8));
    if (type_ == ProbabilityType::Float32)
      probs.narrow(1, y, n).copy_(torch::from_blob(const_cast<void*>(p), {kClasses, n, width}, torch::kFloat));
    if (type_ == ProbabilityType::Byte)
      probs.narrow(1, y, n).copy_(torch::from_blob(const_cast<void*>(p), {kClasses, n, width}, torch::kUInt8)
                                      .to(torch::kFloat) / 255.0);
  }
  ProbabilityType type_;
  torch::Tensor ids, probs;
  int next_row = 0;
};

// A model that looks at one pixel at a time (a 1x1 convolution): its output at a pixel does
// not depend on the window, so any blend of windows must give the whole image's answer.
torch::Tensor pointwise(const torch::Tensor& x) {
  static const torch::Tensor w = torch::tensor({1.0f, -2.0f, 0.5f, 1.5f, -1.0f, 0.25f}).reshape({kClasses, kBands, 1, 1});
  return torch::softmax(torch::conv2d(x, w), 1);
}

TileJob everyWindow(int width, int height, int window, double overlap) {
  TileJob job;
  job.plan = planTiles(width, height, window, overlapPixels(window, overlap));
  job.classes = kClasses;
  job.class_ids = {0, 1, 2};
  job.batch_size = 3;
  job.area = {0, 0, width, height};
  job.row_windows.assign(job.plan.ys.size(), job.plan.xs);
  return job;
}

TEST(TileClassifier, BlendedTilesEqualTheWholeImage) {
  torch::manual_seed(3);
  const int width = 77, height = 53;  // not multiples of the window
  const auto image = torch::randn({kBands, height, width});
  const auto whole = pointwise(image.unsqueeze(0))[0];
  MemorySource source(image);
  MemorySink sink(width, height, ProbabilityType::Float32);
  NullProgress progress;
  const TileResult r = classifyTiles(pointwise, source, sink, everyWindow(width, height, 24, 25), torch::kCPU, progress);
  EXPECT_EQ(sink.next_row, height);
  EXPECT_TRUE(torch::equal(sink.ids, whole.argmax(0).to(torch::kUInt8)));
  EXPECT_LT((sink.probs - whole).abs().max().item<float>(), 1e-5f);
  EXPECT_EQ(r.nodata_pixels, 0);
  EXPECT_EQ(r.windows_computed, int64_t(everyWindow(width, height, 24, 25).plan.windows()));
  int64_t total = 0;
  for (auto c : r.class_pixels) total += c;
  EXPECT_EQ(total, int64_t(width) * height);
}

// A sink that keeps the blend's carry gets each block's carry before the block's rows (so that
// a journal marks a block done with its carry already kept), and none after the last block.
TEST(TileClassifier, EachBlocksCarryComesBeforeItsRows) {
  struct CarrySink : MemorySink {
    using MemorySink::MemorySink;
    bool keepsCarry() const override { return true; }
    void carry(int block, const BlendCarry& state) override {
      calls.push_back("carry " + std::to_string(block) + " from row " + std::to_string(state.y));
    }
    void writeRows(int y, int n, const uint8_t* row_ids, const void* p) override {
      calls.push_back("rows " + std::to_string(y));
      MemorySink::writeRows(y, n, row_ids, p);
    }
    std::vector<std::string> calls;
  };
  const int width = 40, height = 50;
  const TileJob job = everyWindow(width, height, 24, 25);  // the last block moved back to the edge
  ASSERT_EQ(job.plan.ys, (std::vector<int>{0, 18, 26}));
  CarrySink sink(width, height, ProbabilityType::None);
  NullProgress progress;
  classifyTiles(pointwise, MemorySource(torch::randn({kBands, height, width})), sink, job, torch::kCPU, progress);
  EXPECT_EQ(sink.calls, (std::vector<std::string>{"carry 0 from row 18", "rows 0", "carry 1 from row 26", "rows 18",
                                                  "rows 26"}));
}

TEST(TileClassifier, ExtentAndMaskAreNodataAndByteProbabilitiesSumTo255) {
  const int width = 40, height = 30;
  MemorySource source(torch::randn({kBands, height, width}));
  MemorySink sink(width, height, ProbabilityType::Byte);
  TileJob job = everyWindow(width, height, 16, 25);
  job.area = {5, 4, 35, 26};  // [5, 35) x [4, 26)
  job.inside = [](int y, int n, std::vector<uint8_t>& strip) {  // the mask: left of column 20
    strip.assign(size_t(n) * width, 0);
    for (int r = 0; r < n; ++r)
      for (int x = 0; x < 20; ++x) strip[size_t(r) * width + x] = 1;
    (void)y;
  };
  NullProgress progress;
  const TileResult r = classifyTiles(pointwise, source, sink, job, torch::kCPU, progress);
  const int64_t inside = int64_t(20 - 5) * (26 - 4);
  EXPECT_EQ(r.nodata_pixels, int64_t(width) * height - inside);
  EXPECT_EQ((sink.ids == 255).sum().item<int64_t>(), int64_t(width) * height - inside);
  EXPECT_EQ(sink.ids[3][10].item<int>(), 255);   // above the extent
  EXPECT_EQ(sink.ids[10][25].item<int>(), 255);  // outside the mask
  EXPECT_NE(sink.ids[10][10].item<int>(), 255);
  const auto sums = sink.probs.sum(0) * 255.0;
  EXPECT_NEAR(sums[10][10].item<float>(), 255.0f, 2.0f);
  EXPECT_EQ(sums[10][25].item<float>(), 0.0f);
}

TEST(TileClassifier, AWrongOutputShapeIsNamedAndCancellingStopsTheThreads) {
  MemorySource source(torch::randn({kBands, 50, 50}));
  MemorySink sink(50, 50, ProbabilityType::None);
  NullProgress progress;
  const auto two_classes = [](const torch::Tensor& x) { return pointwise(x).narrow(1, 0, 2); };
  try {
    classifyTiles(two_classes, source, sink, everyWindow(50, 50, 16, 25), torch::kCPU, progress);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the model gave an output of shape 2 x 16 x 16"), std::string::npos) << e.what();
  }
  struct CancelAfter : Progress {
    mutable std::atomic<int> reports{0};
    void report(double, const std::string&) override { ++reports; }
    bool cancelled() const override { return reports > 2; }
  } cancel;
  EXPECT_THROW(classifyTiles(pointwise, source, sink, everyWindow(50, 50, 16, 25), torch::kCPU, cancel), Cancelled);
}

// Ranks' bands: each rank's rows, blended from the windows that reach them (its first rows
// computed again), are bit for bit the rows of one process; together they are every row once.
// A smooth ramp through a model that looks at its neighbours (5x5, zero-padded at each
// window's edges, as a network's convolutions are): blended windows leave no seam, the
// probabilities varying across window edges as smoothly as inside them, while the same
// windows without overlap show every edge.
TEST(TileClassifier, BlendingLeavesNoSeamOnARamp) {
  const int size = 200;
  auto ramp = torch::empty({kBands, size, size});
  for (int y = 0; y < size; ++y)
    for (int x = 0; x < size; ++x) {
      ramp[0][y][x] = 2.0f * x / size;
      ramp[1][y][x] = 2.0f * y / size;
    }
  const MemorySource source(ramp);
  const torch::Tensor w = torch::full({kClasses, kBands, 5, 5}, 1.0f / 25) *
                          torch::tensor({1.0f, 0.5f, -1.0f, 1.0f, 0.0f, -0.5f}).reshape({kClasses, kBands, 1, 1});
  const auto model = [&](const torch::Tensor& x) { return torch::softmax(torch::conv2d(x, w, {}, 1, 2), 1); };
  const auto probabilities = [&](int window, int overlap) {
    TileJob job = everyWindow(size, size, window, 0);
    job.plan = planTiles(size, size, window, overlap);
    job.row_windows.assign(job.plan.ys.size(), job.plan.xs);
    MemorySink sink(size, size, ProbabilityType::Float32);
    NullProgress progress;
    classifyTiles(model, source, sink, job, torch::kCPU, progress);
    return sink.probs;
  };
  // The largest jump of the slope, along rows and columns, 3 px or more inside the raster.
  const auto roughness = [](const torch::Tensor& p) {
    const auto inner = p.narrow(1, 3, p.size(1) - 6).narrow(2, 3, p.size(2) - 6);
    const auto dx = inner.narrow(2, 2, inner.size(2) - 2) - 2 * inner.narrow(2, 1, inner.size(2) - 2) +
                    inner.narrow(2, 0, inner.size(2) - 2);
    const auto dy = inner.narrow(1, 2, inner.size(1) - 2) - 2 * inner.narrow(1, 1, inner.size(1) - 2) +
                    inner.narrow(1, 0, inner.size(1) - 2);
    return std::max(dx.abs().max().item<double>(), dy.abs().max().item<double>());
  };
  const auto whole = probabilities(256, 0);  // one window over everything
  const int window = 64, overlap = automaticOverlap(64, window);
  EXPECT_EQ(overlap, 16);
  const auto blended = probabilities(window, overlap);
  const auto hard = probabilities(window, 0);
  // Invisible: under a quarter of one step of the Byte probabilities (1/255), against
  // several steps where windows meet without overlap (the check can fail).
  const double step = 1.0 / 255;
  EXPECT_LT(roughness(whole), 0.1 * step);
  EXPECT_LT(roughness(blended), 0.25 * step) << "a seam where windows meet";
  EXPECT_GT(roughness(hard), 4 * step) << "without overlap the edges must show";
  const auto inner = [](const torch::Tensor& p) { return p.narrow(1, 3, p.size(1) - 6).narrow(2, 3, p.size(2) - 6); };
  EXPECT_LT((inner(blended) - inner(whole)).abs().max().item<double>(), 1e-3);
}

TEST(TileClassifier, BandsOfRanksGiveExactlyTheRowsOfOneProcess) {
  const int width = 83, height = 157;
  torch::manual_seed(5);
  const MemorySource source(torch::randn({kBands, height, width}));
  // A convolution that mixes neighbours, so that a window's output depends on its origin:
  // only the same windows in the same order give the same blend.
  const torch::Tensor w = torch::randn({kClasses, kBands, 5, 5});
  const auto model = [&](const torch::Tensor& x) { return torch::softmax(torch::conv2d(x, w, {}, 1, 2), 1); };
  TileJob job = everyWindow(width, height, 32, 25);
  NullProgress progress;
  MemorySink whole(width, height, ProbabilityType::Float32);
  classifyTiles(model, source, whole, job, torch::kCPU, progress);
  std::vector<int64_t> counts(job.plan.ys.size(), int64_t(job.plan.xs.size()));
  for (int ranks : {2, 3, 7}) {
    MemorySink joined(width, height, ProbabilityType::Float32);
    for (const RowBand& band : splitRows(job.plan, counts, ranks)) {
      job.band = band;
      joined.next_row = band.y0(job.plan);
      if (!band.empty(job.plan)) classifyTiles(model, source, joined, job, torch::kCPU, progress);
      EXPECT_EQ(joined.next_row, band.y1(job.plan));
    }
    EXPECT_TRUE(torch::equal(joined.ids, whole.ids)) << ranks << " ranks";
    EXPECT_TRUE(torch::equal(joined.probs, whole.probs)) << ranks << " ranks";
  }
}

// On a GPU the next batch is computed while this one is blended (compute_ahead): the same
// windows blended in the same order, so the same bytes as one batch at a time, with rows
// that have no window to compute (outside the area) and a band of rows (a rank's share).
TEST(TileClassifier, ComputingTheNextBatchAheadGivesTheSameBytes) {
  const int width = 97, height = 131;
  torch::manual_seed(11);
  const MemorySource source(torch::randn({kBands, height, width}));
  const torch::Tensor w = torch::randn({kClasses, kBands, 5, 5});
  int calls = 0;
  const auto model = [&](const torch::Tensor& x) {
    ++calls;
    return torch::softmax(torch::conv2d(x, w, {}, 1, 2), 1);
  };
  TileJob job = everyWindow(width, height, 32, 25);
  job.row_windows[1].clear();  // rows with nothing to compute, as outside a mask
  job.row_windows[2].clear();
  NullProgress progress;
  std::vector<int64_t> counts;
  for (const auto& xs : job.row_windows) counts.push_back(int64_t(xs.size()));
  for (int ranks : {1, 3}) {
    const auto bands = splitRows(job.plan, counts, ranks);
    for (const RowBand& band : bands) {
      if (band.empty(job.plan)) continue;
      job.band = band;
      std::vector<torch::Tensor> outputs;
      std::vector<int> batches;
      for (bool ahead : {false, true}) {
        job.compute_ahead = ahead;
        MemorySink sink(width, height, ProbabilityType::Float32);
        sink.next_row = band.y0(job.plan);
        calls = 0;
        const TileResult r = classifyTiles(model, source, sink, job, torch::kCPU, progress);
        EXPECT_EQ(sink.next_row, band.y1(job.plan)) << "every row of the band written, in order";
        EXPECT_GT(r.windows_computed, 0);
        outputs.push_back(sink.ids.clone());
        outputs.push_back(sink.probs.clone());
        batches.push_back(calls);
      }
      EXPECT_EQ(batches[0], batches[1]) << "each batch computed once";
      EXPECT_TRUE(torch::equal(outputs[0], outputs[2])) << ranks << " ranks: classes";
      EXPECT_TRUE(torch::equal(outputs[1], outputs[3])) << ranks << " ranks: probabilities";
    }
  }
}

// Rows in memory, with each block's carry and parts (`per_block` of them asked for).
struct PartSink : MemorySink {
  PartSink(int width, int height, ProbabilityType type, int per_block)
      : MemorySink(width, height, type), per_block(per_block) {}
  bool keepsCarry() const override { return true; }
  void carry(int block, const BlendCarry& state) override { carries[block] = state; }
  int partsPerBlock() const override { return per_block; }
  void part(const BlockPart& state) override { parts[state.block].push_back(state); }
  int per_block;
  std::map<int, BlendCarry> carries;
  std::map<int, std::vector<BlockPart>> parts;
};

// A sink that keeps parts of blocks gets them at whole batches, each from the previous one's
// final column; a band resumed from any chain of a block's first parts (over the blend of the
// rows above: the carry of the block before, or those rows computed again) computes only the
// windows after them and gives the bytes of the uninterrupted run. A carry holds only the rows
// the windows above reach.
TEST(TileClassifier, ABlockResumedFromItsPartsGivesTheBytesOfTheWholeRun) {
  const int width = 300, height = 131;
  torch::manual_seed(13);
  const MemorySource source(torch::randn({kBands, height, width}));
  const torch::Tensor w = torch::randn({kClasses, kBands, 5, 5});
  const auto model = [&](const torch::Tensor& x) { return torch::softmax(torch::conv2d(x, w, {}, 1, 2), 1); };
  TileJob job = everyWindow(width, height, 32, 25);
  job.batch_size = 2;
  job.parts_wait = true;  // not put off by a busy writing thread: the same parts at every run
  ASSERT_EQ(job.plan.xs.size(), 13u);
  NullProgress progress;
  PartSink whole(width, height, ProbabilityType::Float32, 3);
  const TileResult all = classifyTiles(model, source, whole, job, torch::kCPU, progress);
  const int blocks = int(job.plan.ys.size());
  for (const auto& [block, c] : whole.carries)  // the rows of block's windows below it: 8, the overlap, but the last
    EXPECT_EQ(c.rows, std::min(job.plan.ys[size_t(block)] + 32, height) - c.y) << "block " << block;
  size_t most = 0;
  for (const auto& [block, parts] : whole.parts) {
    most = std::max(most, parts.size());
    EXPECT_EQ(parts.front().x0, 0);
    for (size_t i = 0; i < parts.size(); ++i) {
      const BlockPart& p = parts[i];
      EXPECT_EQ(p.windows % job.batch_size, 0) << "a part inside a batch";
      EXPECT_LT(p.windows, 13) << "a part of a finished row";
      if (i > 0) EXPECT_EQ(p.x0, parts[i - 1].final_x);
      EXPECT_EQ(p.final_x, job.plan.xs[size_t(p.windows)]);
      EXPECT_EQ(p.x1, std::min(width, job.plan.xs[size_t(p.windows) - 1] + 32));
    }
  }
  ASSERT_GE(most, 2u) << "no block got two parts to join";
  int64_t resumed_windows = 0;
  for (const auto& [block, parts] : whole.parts) {
    for (size_t n = 1; n <= parts.size(); ++n) {
      const auto joined = joinParts({parts.begin(), parts.begin() + long(n)});
      ASSERT_TRUE(joined);
      EXPECT_EQ(joined->windows, parts[n - 1].windows);
      for (bool from_carry : {true, false}) {
        if (from_carry && block == 0) continue;
        job.band = {block, -1, from_carry ? block : firstContributingRow(job.plan, block)};
        job.start_carry = from_carry ? &whole.carries.at(block - 1) : nullptr;
        job.start_part = &*joined;
        MemorySink resumed(width, height, ProbabilityType::Float32);
        resumed.next_row = job.plan.ys[size_t(block)];
        const TileResult r = classifyTiles(model, source, resumed, job, torch::kCPU, progress);
        const std::string at = "block " + std::to_string(block) + " after " + std::to_string(joined->windows) +
                               " windows" + (from_carry ? " and its carry" : "");
        const int y = job.plan.ys[size_t(block)];
        EXPECT_TRUE(torch::equal(resumed.ids.narrow(0, y, height - y), whole.ids.narrow(0, y, height - y))) << at;
        EXPECT_TRUE(torch::equal(resumed.probs.narrow(1, y, height - y), whole.probs.narrow(1, y, height - y))) << at;
        const int64_t own = int64_t(blocks - block) * 13 - joined->windows;
        if (from_carry) EXPECT_EQ(r.windows_computed, own) << at;
        if (from_carry) resumed_windows = r.windows_computed;
      }
    }
  }
  EXPECT_GT(resumed_windows, 0);
  EXPECT_EQ(all.windows_computed, int64_t(blocks) * 13);
  job.band = {2, -1, 2};
  job.start_carry = &whole.carries.at(1);
  BlockPart wrong = *joinParts(whole.parts.begin()->second);
  wrong.block = 3;
  job.start_part = &wrong;
  MemorySink refused(width, height, ProbabilityType::None);
  EXPECT_THROW(classifyTiles(model, source, refused, job, torch::kCPU, progress), Error);
}

// On a wide raster a row gets a part every kMostWindowsPerPart windows or so (more than the
// sink asks for), so that a part's columns stay bounded; the newest resumes to the same bytes.
TEST(TileClassifier, AWideRowGetsAPartEveryFewWindows) {
  const int width = 6200, height = 40;
  const MemorySource source(torch::randn({kBands, height, width}));
  TileJob job = everyWindow(width, height, 32, 25);
  job.batch_size = 5;
  job.parts_wait = true;
  const int row = int(job.plan.xs.size());
  ASSERT_GT(row, 4 * kMostWindowsPerPart);
  NullProgress progress;
  PartSink whole(width, height, ProbabilityType::Float32, 1);
  classifyTiles(pointwise, source, whole, job, torch::kCPU, progress);
  ASSERT_EQ(whole.parts.size(), job.plan.ys.size());
  // One part a block without the bound; 4 with it.
  for (const auto& [block, parts] : whole.parts) EXPECT_GE(parts.size(), 2u) << "block " << block;
  const auto joined = joinParts(whole.parts.at(1));
  ASSERT_TRUE(joined);
  job.band = {1, -1, 1};
  job.start_carry = &whole.carries.at(0);
  job.start_part = &*joined;
  MemorySink resumed(width, height, ProbabilityType::Float32);
  resumed.next_row = job.plan.ys[1];
  classifyTiles(pointwise, source, resumed, job, torch::kCPU, progress);
  const int y = job.plan.ys[1];
  EXPECT_TRUE(torch::equal(resumed.ids.narrow(0, y, height - y), whole.ids.narrow(0, y, height - y)));
  EXPECT_TRUE(torch::equal(resumed.probs.narrow(1, y, height - y), whole.probs.narrow(1, y, height - y)));
}

// Parts chain from column 0, each from the one before's final column: a part that does not
// continue the chain (one lost, or of another run) ends it, and a part without values joins
// nothing.
TEST(TileClassifier, PartsJoinWhileTheyChain) {
  const auto part = [](int windows, int x0, int final_x, int x1, float value) {
    BlockPart p;
    p.block = 4, p.windows = windows, p.y = 10, p.rows = 2, p.width = 10, p.classes = 1;
    p.x0 = x0, p.final_x = final_x, p.x1 = x1;
    p.sums.assign(size_t(2 * (x1 - x0)), value);
    p.weights.assign(size_t(2 * (x1 - x0)), 1.0f);
    p.valid.assign(size_t(2 * (x1 - x0)), 1);
    return p;
  };
  const std::vector<BlockPart> chain = {part(2, 0, 3, 5, 1.0f), part(4, 3, 6, 8, 2.0f), part(6, 7, 8, 10, 3.0f)};
  EXPECT_EQ(chainedParts(chain), 2u) << "the third does not start at the second's final column";
  const auto joined = joinParts(chain);
  ASSERT_TRUE(joined);
  EXPECT_EQ(joined->windows, 4);
  EXPECT_EQ(joined->x0, 0);
  EXPECT_EQ(joined->x1, 8);
  EXPECT_EQ(joined->sums, (std::vector<float>{1, 1, 1, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2}));
  EXPECT_EQ(chainedParts({part(2, 1, 3, 5, 1.0f)}), 0u) << "a chain starts at column 0";
  BlockPart headers_only = part(2, 0, 3, 5, 1.0f);
  headers_only.sums.clear();
  EXPECT_EQ(chainedParts({headers_only}), 1u);
  EXPECT_FALSE(joinParts({headers_only}));
}

}  // namespace
}  // namespace geodl
