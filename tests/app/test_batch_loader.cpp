// The batch loader: every sample once, an order that depends on the seed and epoch only.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "app/batch_loader.h"
#include "base/errors.h"
#include "core/test_support.h"
#include "io/gis_fixtures.h"
#include "app/ml_fixtures.h"
#include "io/sample_store.h"

namespace geodl {
namespace {

namespace fs = std::filesystem;
using namespace test;  // TempDir, makeStore, kSize, kBands, expectErrorContaining

// A loader of the first `samples` of a 3-band store, 2 classes, unnormalized.
LoaderOptions plainLoader(const std::string& store, int64_t samples, int batch_size) {
  LoaderOptions o;
  o.store = store;
  o.samples = samples;
  o.batch_size = batch_size;
  o.mean = {0, 0, 0};
  o.std = {1, 1, 1};
  o.num_classes = 2;
  return o;
}

TEST(BatchLoader, EverySampleOnceInAnOrderThatDependsOnlyOnSeedAndEpoch) {
  TempDir dir;
  const std::string store = makeStore(dir.path("s.hdf5"), 11, 5);
  const auto epochOrder = [&](int threads, int epoch, bool shuffle, int rank = 0, int world = 1) {
    LoaderOptions o = plainLoader(store, 11, 3);
    o.seed = 9;
    o.shuffle = shuffle;
    o.threads = threads;
    o.prefetch = 2;
    o.rank = rank;
    o.world_size = world;
    o.augmentation.rotate_limit = 30;
    o.augmentation.rotate_prob = 0.5;
    BatchLoader loader(o);
    loader.startEpoch(epoch);
    std::vector<torch::Tensor> batches;
    Batch b;
    while (loader.next(b)) batches.push_back(b.images);
    EXPECT_EQ(int64_t(batches.size()), loader.batchesPerEpoch());
    return batches;
  };
  const auto one = epochOrder(1, 0, true), three = epochOrder(3, 0, true);
  ASSERT_EQ(one.size(), 4u);  // 3 + 3 + 3 + 2
  EXPECT_EQ(one.back().size(0), 2);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(torch::equal(one[i], three[i]));
  const auto next = epochOrder(2, 1, true);
  EXPECT_FALSE(torch::equal(one[0], next[0]));
  // Each sample appears once: compare the un-augmented mean of each sample.
  const auto plain = epochOrder(2, 0, false);
  std::set<float> seen;
  for (const auto& b : plain)
    for (int64_t i = 0; i < b.size(0); ++i) seen.insert(b[i].sum().item<float>());
  EXPECT_EQ(seen.size(), 11u);
  // Two ranks share the batches between them.
  EXPECT_EQ(epochOrder(1, 0, true, 0, 2).size() + epochOrder(1, 0, true, 1, 2).size(), 4u);
  EXPECT_TRUE(torch::equal(epochOrder(1, 0, true, 1, 2)[0], one[1]));
}

// Training leaves out a last batch of one sample (BatchNorm needs two values per channel),
// a different sample each epoch; a batch of 1 keeps every batch, and so does validation.
TEST(BatchLoader, TrainingLeavesOutALastBatchOfOneSample) {
  TempDir dir;
  const std::string store = makeStore(dir.path("s.hdf5"), 9, 5);
  const auto epoch = [&](int batch_size, bool drop_single, int e, int rank = 0, int world = 1) {
    LoaderOptions o = plainLoader(store, 9, batch_size);
    o.seed = 4;
    o.shuffle = true;
    o.drop_single = drop_single;
    o.rank = rank;
    o.world_size = world;
    o.equal_shares = world > 1;
    BatchLoader loader(o);
    loader.startEpoch(e);
    std::vector<int64_t> sizes;
    std::set<float> seen;
    Batch b;
    while (loader.next(b)) {
      sizes.push_back(b.images.size(0));
      for (int64_t i = 0; i < b.images.size(0); ++i) seen.insert(b.images[i].sum().item<float>());
    }
    EXPECT_EQ(int64_t(sizes.size()), loader.batchesPerEpoch());
    EXPECT_EQ(loader.leavesOutASample(), drop_single && batch_size == 4);  // 9 % 4 == 1 only
    return std::make_pair(sizes, seen);
  };
  EXPECT_EQ(epoch(4, true, 0).first, (std::vector<int64_t>{4, 4}));  // 9 = 4 + 4 + 1
  EXPECT_EQ(epoch(4, false, 0).first, (std::vector<int64_t>{4, 4, 1}));
  EXPECT_EQ(epoch(1, true, 0).first.size(), 9u);
  EXPECT_EQ(epoch(3, true, 0).first, (std::vector<int64_t>{3, 3, 3}));
  // Another sample waits in another epoch: over two epochs all nine are seen.
  auto seen = epoch(4, true, 0).second;
  EXPECT_EQ(seen.size(), 8u);
  for (float v : epoch(4, true, 1).second) seen.insert(v);
  EXPECT_EQ(seen.size(), 9u);
  // With two ranks, as many steps each (2 batches of 4; the single sample is left out).
  EXPECT_EQ(epoch(4, true, 0, 0, 2).first, (std::vector<int64_t>{4}));
  EXPECT_EQ(epoch(4, true, 0, 1, 2).first, (std::vector<int64_t>{4}));
}

TEST(BatchLoader, LabelBeyondTheClassesIsAClearError) {
  TempDir dir;
  const std::string store = makeStore(dir.path("s.hdf5"), 4, 5, 3);
  BatchLoader loader(plainLoader(store, 4, 2));
  loader.startEpoch(0);
  Batch b;
  expectErrorContaining([&] { loader.next(b); }, "has pixels of class 2 but the model has 2 classes");
}

}  // namespace
}  // namespace geodl
