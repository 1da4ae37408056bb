// createSamples end to end on data the tests make, and on the real Massachusetts data.
#include <gtest/gtest.h>

#include "core/reference_missing.h"

#include <limits>

#include <cmath>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "app/create_samples.h"
#include "base/errors.h"
#include "io/gis_fixtures.h"
#include "io/gdal_util.h"
#include "io/sample_store.h"

namespace geodl {
namespace {

namespace fs = std::filesystem;
using test::box;

// A 70 x 50 raster (1 m pixels, corner (1000, 2000)), band b = 10 * (b + 1), and a
// building (class 1) over columns 10..29, rows 10..19.
struct Scene {
  test::TempDir dir;
  std::string raster, vector;
  Scene(int width = 70, int height = 50, std::optional<double> nodata = std::nullopt) {
    test::RasterSpec spec;
    spec.width = width;
    spec.height = height;
    spec.bands = 3;
    spec.nodata = nodata;
    spec.value = [](int c, int, int b) { return c >= 60 ? 0.0 : 10.0 * (b + 1); };
    raster = test::makeRaster(dir.path("scene.tif"), spec);
    vector = test::makeVector(dir.path("truth.gpkg"), 32618, "class", OFTInteger,
                              {{box(1010, 1980, 1030, 1990), "1"}});
  }
  SampleOptions options(int size = 32, int stride = 20) const {
    SampleOptions o;
    o.sources = {{raster, vector, "", "class", "trn"}};
    o.output_folder = dir.path("samples");
    o.sample_size = size;
    o.stride = stride;
    o.num_classes = 2;
    o.bands = 3;
    return o;
  }
};

TEST(CreateSamples, WindowsCoverTheWholeRasterAndPaddingIsIgnored) {
  Scene scene;
  NullProgress progress;
  const auto result = createSamples(scene.options(), progress);
  // Columns 0, 20, 40 (40 + 32 reaches 70) and rows 0, 20 (20 + 32 reaches 50).
  ASSERT_EQ(result.splits.size(), 1u);
  EXPECT_EQ(result.splits[0].samples, 6);
  EXPECT_EQ(result.windows, 6);
  const auto store = scene.dir.path("samples/trn_samples.hdf5");
  const auto contents = io::readStoreMetadata(store);
  EXPECT_EQ(contents.samples, 6);
  EXPECT_EQ(contents.metadata.sample_size, 32);
  EXPECT_EQ(contents.metadata.bands, 3);
  EXPECT_EQ(contents.metadata.data_type, "Byte");
  EXPECT_EQ(contents.metadata.ignore_index, 255);
  EXPECT_EQ(contents.metadata.class_ids, (std::vector<int>{0, 1}));
  // The last window (40, 20) reaches 2 columns and 2 rows past the raster: ignored there.
  std::vector<double> image;
  std::vector<uint8_t> labels;
  io::readSample(store, 5, image, labels);
  ASSERT_EQ(labels.size(), 32u * 32u);
  for (int r = 0; r < 32; ++r) {
    for (int c = 0; c < 32; ++c) {
      const bool outside = 40 + c >= 70 || 20 + r >= 50;
      EXPECT_EQ(labels[size_t(r) * 32 + c] == 255, outside) << c << "," << r;
      if (outside) EXPECT_EQ(image[(size_t(r) * 32 + c) * 3], 0.0);
    }
  }
  // The building, exactly, in the first window.
  io::readSample(store, 0, image, labels);
  int64_t building = 0;
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 32; ++c) {
      const bool inside = c >= 10 && c < 30 && r >= 10 && r < 20;
      EXPECT_EQ(labels[size_t(r) * 32 + c], inside ? 1 : 0);
      building += inside;
    }
  EXPECT_EQ(image[0], 10.0);
  EXPECT_EQ(image[1], 20.0);
  EXPECT_EQ(image[2], 30.0);
  // Pixel counts: the building appears once per window that covers it.
  EXPECT_GT(result.splits[0].class_pixels[1], building - 1);
  EXPECT_TRUE(fs::exists(result.footprint_path));
}

TEST(CreateSamples, NodataPixelsAreIgnoredAndStatisticsSkipThem) {
  Scene scene(70, 50, 0.0);  // columns 60..69 are 0 in every band: nodata
  NullProgress progress;
  const auto result = createSamples(scene.options(), progress);
  std::vector<double> image;
  std::vector<uint8_t> labels;
  io::readSample(scene.dir.path("samples/trn_samples.hdf5"), 2, image, labels);  // window (40, 0)
  for (int c = 0; c < 30; ++c) EXPECT_EQ(labels[c] == 255, 40 + c >= 60) << c;
  // Only valid pixels count: every band is constant there.
  EXPECT_DOUBLE_EQ(result.band_mean[0], 10.0);
  EXPECT_DOUBLE_EQ(result.band_mean[2], 30.0);
  EXPECT_DOUBLE_EQ(result.band_std[1], 0.0);
}

TEST(CreateSamples, NanAndInfinitePixelsAreNodataEvenUndeclared) {
  test::TempDir dir;
  test::RasterSpec spec;
  spec.width = 70;
  spec.height = 50;
  spec.bands = 2;
  spec.type = GDT_Float32;
  spec.value = [](int c, int r, int b) {
    if (c == 5 && r < 10) return b == 0 ? std::nan("") : 1.0;      // NaN in one band
    if (c == 6 && r < 10) return std::numeric_limits<double>::infinity();
    return 10.0 * (b + 1);
  };
  const std::string raster = test::makeRaster(dir.path("float.tif"), spec);
  const std::string vector = test::makeVector(dir.path("truth.gpkg"), 32618, "class", OFTInteger,
                                              {{test::box(1010, 1980, 1030, 1990), "1"}});
  SampleOptions o;
  o.sources = {{raster, vector, "", "class", "trn"}};
  o.output_folder = dir.path("samples");
  o.sample_size = 32;
  o.stride = 20;
  o.num_classes = 2;
  NullProgress progress;
  const auto result = createSamples(o, progress);
  // The statistics skip them (no NaN), and the labels there are the ignore index.
  EXPECT_DOUBLE_EQ(result.band_mean[0], 10.0);
  EXPECT_DOUBLE_EQ(result.band_std[1], 0.0);
  std::vector<double> image;
  std::vector<uint8_t> labels;
  io::readSample(dir.path("samples/trn_samples.hdf5"), 0, image, labels);  // window (0, 0)
  EXPECT_EQ(labels[5], 255);
  EXPECT_EQ(labels[6], 255);
  EXPECT_EQ(labels[7], 0);
  for (double v : image) EXPECT_TRUE(std::isfinite(v));
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(result.warnings[0].find("20 NaN or infinite pixels it does not declare as nodata"), std::string::npos)
      << result.warnings[0];
}

TEST(CreateSamples, MinimumAnnotatedPercentAndBackgroundRemovalDropWindows) {
  Scene scene;
  NullProgress progress;
  auto o = scene.options();
  o.remove_background = true;  // only windows touching the building remain
  auto result = createSamples(o, progress);
  EXPECT_EQ(result.splits[0].samples, 2);  // (0, 0) and (20, 0)
  o.remove_background = false;
  o.min_annotated_percent = 19;  // (0,0): 200/1024 = 19.5 %; (20,0): 100/1024
  result = createSamples(o, progress);
  EXPECT_EQ(result.splits[0].samples, 1);
}

TEST(CreateSamples, UnlabelledPixelsCanBeIgnoredForSparseAnnotations) {
  Scene scene;
  NullProgress progress;
  auto o = scene.options();
  o.unlabelled_ignored = true;
  o.remove_background = true;
  const auto result = createSamples(o, progress);
  std::vector<double> image;
  std::vector<uint8_t> labels;
  io::readSample(result.splits[0].path, 0, image, labels);
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 32; ++c) {
      const bool inside = c >= 10 && c < 30 && r >= 10 && r < 20;
      EXPECT_EQ(labels[size_t(r) * 32 + c], inside ? 1 : 255);
    }
  EXPECT_EQ(result.splits[0].class_pixels[0], 0);
}

TEST(CreateSamples, ValidationBlocksNeverShareAWindow) {
  Scene scene(200, 200);
  NullProgress progress;
  auto o = scene.options(16, 8);
  o.split_mode = SplitMode::ValidationPercent;
  o.validation_percent = 30;
  o.seed = 5;
  const auto result = createSamples(o, progress);
  ASSERT_EQ(result.splits.size(), 2u);
  // Blocks are 64 px: no training window overlaps a validation window.
  io::initGdal();
  io::Dataset footprints = io::openVector(result.footprint_path);
  std::vector<std::pair<int, int>> trn, val;
  for (auto& f : *footprints->GetLayer(0))
    (std::string(f->GetFieldAsString("split")) == "trn" ? trn : val)
        .emplace_back(f->GetFieldAsInteger("col"), f->GetFieldAsInteger("row"));
  EXPECT_EQ(int64_t(trn.size()), result.splits[0].samples);
  EXPECT_EQ(int64_t(val.size()), result.splits[1].samples);
  EXPECT_GT(trn.size(), val.size());
  EXPECT_GT(val.size(), 0u);
  for (auto [tx, ty] : trn)
    for (auto [vx, vy] : val)
      EXPECT_FALSE(std::abs(tx - vx) < 16 && std::abs(ty - vy) < 16)
          << "trn (" << tx << "," << ty << ") overlaps val (" << vx << "," << vy << ")";
}

TEST(CreateSamples, ValidationPolygonsTakeTheWindowsInsideAndDropThoseAcross) {
  Scene scene(200, 200);
  NullProgress progress;
  auto o = scene.options(16, 16);
  o.split_mode = SplitMode::ValidationPolygons;
  // Columns 0..39 (x 1000-1040), all rows and beyond (the last row of windows reaches past
  // the raster): windows at columns 0 and 16 are inside, the one
  // at 32 straddles the border, the others are outside.
  o.validation_vector = test::makeVector(scene.dir.path("val.gpkg"), 32618, "id", OFTInteger,
                                         {{box(1000, 1700, 1040, 2000), "1"}});
  const auto result = createSamples(o, progress);
  io::Dataset footprints = io::openVector(result.footprint_path);
  std::set<int> trn_cols, val_cols;
  for (auto& f : *footprints->GetLayer(0))
    (std::string(f->GetFieldAsString("split")) == "trn" ? trn_cols : val_cols)
        .insert(f->GetFieldAsInteger("col"));
  EXPECT_EQ(val_cols, (std::set<int>{0, 16}));
  EXPECT_EQ(trn_cols.count(32), 0u);
  EXPECT_EQ(*trn_cols.begin(), 48);
  EXPECT_EQ(result.splits[1].samples, 2 * 13);  // 2 columns x 13 rows (0..192)
}

void expectError(const std::function<void()>& f, const std::string& part) {
  test::expectErrorContaining(f, part);
}

TEST(CreateSamples, BadInputGivesAClearErrorAndWritesNothing) {
  Scene scene;
  NullProgress progress;
  auto o = scene.options();
  o.bands = 4;
  expectError([&] { createSamples(o, progress); }, "has 3 bands but number_of_bands is 4");
  o = scene.options(64);
  expectError([&] { createSamples(o, progress); }, "is larger than the raster");
  o = scene.options();
  o.num_classes = 1;
  expectError([&] { createSamples(o, progress); }, "has class values 0, 1 (0 is the background) but num_classes is 1");
  o = scene.options();
  o.sources[0].raster = scene.dir.path("nope.tif");
  expectError([&] { createSamples(o, progress); }, "cannot open the raster");
  // The ranges are the table's, for a struct filled by code too, in the words of a flag's
  // (these two had drifted from it: a literal 8, and "between 1 and 255" while 0 passed).
  o = scene.options();
  o.sample_size = kMinSampleSize - 1;
  expectError([&] { createSamples(o, progress); },
              "the option sample_size (global.samples_size, --samples-size, SAMPLE_SIZE) has the value '7', which is "
              "not a whole number from 8 to 100000; give such a value");
  o = scene.options();
  o.num_classes = 256;
  expectError([&] { createSamples(o, progress); }, "has the value '256', which is not a whole number from 0 to 255");
  o = scene.options();
  o.footprint_path = scene.dir.path("footprints.shp");
  expectError([&] { createSamples(o, progress); }, "the footprint layer is written as a GeoPackage: give a .gpkg file");
  o = scene.options();
  o.rank = 2;
  o.world_size = 2;
  expectError([&] { createSamples(o, progress); }, "the rank (2) must be below the world size (2)");
  o = scene.options();
  o.min_annotated_percent = 90;
  expectError([&] { createSamples(o, progress); }, "no sample for the 'trn' split");
  // A raster of one block (4 x 4 samples of 32 px): the percentage split cannot leave any for
  // training, and says so (it used to say every window "was left out").
  o = scene.options();
  o.split_mode = SplitMode::ValidationPercent;
  o.validation_percent = 20;
  expectError([&] { createSamples(o, progress); },
              "the split by percentage gave every window to validation: it draws blocks of 4 x 4 samples (128 px "
              "square), and the raster holds 1 block, too few to leave one for training; use a smaller samples_size");
  o = scene.options();
  o.split_mode = SplitMode::ValidationPolygons;
  o.validation_vector = test::makeVector(scene.dir.path("all.gpkg"), 32618, "id", OFTInteger,
                                         {{box(900, 1900, 1200, 2100), "1"}});
  expectError([&] { createSamples(o, progress); },
              "no window of 32 px lies wholly outside the validation polygons of '" + o.validation_vector +
                  "', so the training split would be empty");
  // None of these left a store or footprint behind.
  if (fs::exists(scene.dir.path("samples")))
    for (const auto& entry : fs::directory_iterator(scene.dir.path("samples")))
      ADD_FAILURE() << "left behind: " << entry.path();
}

struct CancelAt final : Progress {
  void report(double f, const std::string&) override { fraction = f; }
  bool cancelled() const override { return fraction > 0.3; }
  double fraction = 0;
};

// Every sample of a store and its window, in order.
std::vector<std::vector<float>> storeSamples(const std::string& path) {
  io::SampleStoreReader reader(path);
  const size_t pixels = size_t(reader.sampleSize()) * size_t(reader.sampleSize());
  std::vector<std::vector<float>> all;
  std::vector<float> image(pixels * size_t(reader.bands()));
  std::vector<uint8_t> labels(pixels);
  for (int64_t i = 0; i < reader.size(); ++i) {
    reader.read(i, image.data(), labels.data());
    all.push_back(image);
    all.back().insert(all.back().end(), labels.begin(), labels.end());
  }
  return all;
}

TEST(CreateSamples, CancelKeepsOnlyWhatItReadAndResumeGivesTheSameSamples) {
  Scene scene(200, 200);
  CancelAt progress;
  try {
    createSamples(scene.options(16, 8), progress);
    ADD_FAILURE() << "not cancelled";
  } catch (const Cancelled& e) {
    EXPECT_NE(std::string(e.what()).find("run it again with the option resume"), std::string::npos) << e.what();
  }
  // No store, no footprint: only the journal of the windows it read, hidden.
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(scene.dir.path("samples"))) left.push_back(entry.path().filename());
  EXPECT_EQ(left, std::vector<std::string>{".samples.partial"});
  // Resumed, the job reads the rest and writes what an uninterrupted one writes.
  SampleOptions resumed = scene.options(16, 8);
  resumed.resume = true;
  NullProgress quiet;
  const SampleResult r = createSamples(resumed, quiet);
  SampleOptions whole = scene.options(16, 8);
  whole.output_folder = scene.dir.path("whole");
  const SampleResult w = createSamples(whole, quiet);
  EXPECT_EQ(r.windows, w.windows);
  EXPECT_EQ(r.pixels_read, w.pixels_read);
  ASSERT_EQ(r.splits.size(), w.splits.size());
  for (size_t k = 0; k < r.splits.size(); ++k) {
    EXPECT_EQ(r.splits[k].samples, w.splits[k].samples);
    EXPECT_EQ(r.splits[k].class_pixels, w.splits[k].class_pixels);
    EXPECT_EQ(storeSamples(r.splits[k].path), storeSamples(w.splits[k].path));
  }
  EXPECT_EQ(r.band_mean, w.band_mean);
  EXPECT_FALSE(fs::exists(scene.dir.path("samples/.samples.partial")));
}

TEST(CreateSamples, RanksShareTheWindowsBetweenThem) {
  Scene scene;
  NullProgress progress;
  int64_t total = 0;
  for (int rank = 0; rank < 2; ++rank) {
    auto o = scene.options();
    o.rank = rank;
    o.world_size = 2;
    o.output_folder = scene.dir.path("rank" + std::to_string(rank));
    total += createSamples(o, progress).splits[0].samples;
  }
  EXPECT_EQ(total, 6);
}

// Each dataset of a store carries a digest of its bytes; a store whose bytes changed is
// refused naming the dataset, and one without digests (geo-deep-learning's) warns.
TEST(SampleStore, DigestsTellADamagedStore) {
  Scene scene(200, 200);
  NullProgress progress;
  const auto result = createSamples(scene.options(16, 8), progress);
  const std::string store = result.splits[0].path;
  EXPECT_TRUE(io::verifyStore(store).empty());
  const auto bytes = fs::file_size(store);
  for (const std::string dataset : {"sat_img", "map_img"}) {
    const std::string copy = scene.dir.path(dataset + ".hdf5");
    fs::copy_file(store, copy);
    // One byte of the dataset's first chunk (the first sample) flipped, found by h5py.
    const std::string command = std::string("/usr/bin/python3 ") + GEODL_TEST_SOURCE_DIR + "/reference/chunk_offset.py " +
                                copy + " " + dataset + " 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    char line[64] = {0};
    if (!pipe || !fgets(line, sizeof line, pipe.get()))
      GEODL_REFERENCE_MISSING("Debian's python3-h5py is not installed (scripts/install-deps.sh installs it)");
    const uintmax_t offset = std::strtoull(line, nullptr, 10);
    ASSERT_GT(offset, 0u);
    ASSERT_LT(offset, bytes);
    std::fstream file(copy, std::ios::in | std::ios::out | std::ios::binary);
    file.seekg(std::streamoff(offset));
    char c = 0;
    file.read(&c, 1);
    c = char(c ^ 0x01);
    file.seekp(std::streamoff(offset));
    file.write(&c, 1);
    file.close();
    test::expectErrorContaining([&] { io::verifyStore(copy); },
                                "the sample store '" + copy + "' is damaged: its dataset '" + dataset +
                                    "' differs from the digest `geodl samples` wrote with it");
  }
  // Cancelled between reads.
  EXPECT_THROW(io::verifyStore(store, [] { throw Cancelled(); }), Cancelled);
}

TEST(SampleStore, GeoDeepLearningStoresReadToo) {
  test::TempDir dir;
  const std::string path = dir.path("gdl.hdf5");
  const std::string command = std::string("/usr/bin/python3 ") + GEODL_TEST_SOURCE_DIR +
                              "/reference/write_gdl_store.py " + path + " 2>/dev/null";
  if (std::system(command.c_str()) != 0)
    GEODL_REFERENCE_MISSING("Debian's python3-h5py is not installed (scripts/install-deps.sh installs it)");
  io::SampleStoreReader reader(path);
  EXPECT_EQ(reader.size(), 3);
  EXPECT_EQ(reader.sampleSize(), 8);
  EXPECT_EQ(reader.bands(), 4);
  std::vector<float> image(8 * 8 * 4);
  std::vector<uint8_t> labels(8 * 8);
  reader.read(2, image.data(), labels.data());
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) {
      EXPECT_EQ(labels[size_t(r) * 8 + c], (r + c) % 3);
      for (int b = 0; b < 4; ++b) EXPECT_EQ(image[(size_t(r) * 8 + c) * 4 + b], 2 + r + c + b);
    }
  EXPECT_THROW(reader.read(3, image.data(), labels.data()), InputError);
  const auto warnings = io::verifyStore(path);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("carries no digests"), std::string::npos) << warnings[0];
  const auto contents = io::readStoreMetadata(path);
  EXPECT_EQ(contents.samples, 3);
  EXPECT_EQ(contents.metadata.sample_size, 8);
  EXPECT_EQ(contents.metadata.bands, 4);
}

TEST(CreateSamples, MassachusettsBuildings) {
  const std::string data = test::massachusettsFolder();
  if (data.empty()) GTEST_SKIP() << "../shared/data/massachusetts is absent: real-data test skipped";
  test::TempDir dir;
  SampleOptions o;
  o.sources = {{data + "/22978945_15.tif", data + "/massachusetts_buildings.gpkg", "", "class", "trn"},
               {data + "/23429155_15.tif", data + "/massachusetts_buildings.gpkg", "", "class", "val"}};
  o.output_folder = dir.path("samples");
  o.sample_size = 256;
  o.stride = 200;
  o.num_classes = 2;
  o.bands = 3;
  NullProgress progress;
  const auto result = createSamples(o, progress);
  ASSERT_EQ(result.splits.size(), 2u);
  // 1182 x 901: columns 0..1000 step 200 (6), rows 0..800 (5) = 30;
  // 1046 x 751: columns 0..800 (5), rows 0..600 (4) = 20.
  EXPECT_EQ(result.splits[0].samples, 30);
  EXPECT_EQ(result.splits[1].samples, 20);
  // Buildings cover a real share of the training scene.
  const double building = double(result.splits[0].class_pixels[1]);
  const double all = building + double(result.splits[0].class_pixels[0]);
  EXPECT_GT(building / all, 0.05);
  EXPECT_LT(building / all, 0.6);
  // A Byte and a UInt16 image: the stores share Float32, which holds both exactly.
  EXPECT_EQ(io::readStoreMetadata(result.splits[0].path).metadata.data_type, "Float32");
  EXPECT_GT(result.band_mean[0], 20);
  EXPECT_LT(result.band_mean[0], 240);
}

}  // namespace
}  // namespace geodl
