// The journal of a classification's finished blocks (io/block_journal.h): each block written
// through the sink reads back as written and is marked done with its pixels per class; a
// block without its marker, a marker cut short and the temporaries of a killed run are not
// finished blocks and go; the description and the folders' life.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numeric>

#include "io/block_journal.h"
#include "io/gdal_util.h"
#include "io/gis_fixtures.h"
#include "io/raster_tiles.h"

namespace geodl {
namespace {

namespace fs = std::filesystem;

// A 12 x 10 raster of 3 classes in blocks of rows starting at 0, 4 and 7.
io::GeoTiffSpec classes12x10() {
  io::GeoTiffSpec spec;
  spec.width = 12;
  spec.height = 10;
  spec.geotransform = {1000, 0.5, 0, 2000, 0, -0.5};
  spec.has_nodata = true;
  spec.nodata = 255;
  spec.categories = {"a", "b", "c"};
  return spec;
}
const std::vector<int> kBlocks = {0, 4, 7};

uint8_t id(int c, int r) { return r == 9 && c < 3 ? 255 : uint8_t((c + 2 * r) % 3); }

// Rows [y, y + n): the ids, and 3 Byte probability planes.
void rows(int y, int n, std::vector<uint8_t>& ids, std::vector<uint8_t>& probabilities) {
  ids.clear();
  probabilities.assign(size_t(3) * n * 12, 0);
  for (int r = y; r < y + n; ++r)
    for (int c = 0; c < 12; ++c) {
      ids.push_back(id(c, r));
      for (int k = 0; k < 3; ++k) probabilities[(size_t(k) * n + size_t(r - y)) * 12 + size_t(c)] = uint8_t(10 * k + r);
    }
}

std::vector<uint8_t> readBand(const std::string& path, int band) {
  io::Dataset ds = io::openRaster(path);
  std::vector<uint8_t> v(size_t(ds->GetRasterXSize()) * ds->GetRasterYSize());
  EXPECT_EQ(ds->GetRasterBand(band)->RasterIO(GF_Read, 0, 0, ds->GetRasterXSize(), ds->GetRasterYSize(), v.data(),
                                              ds->GetRasterXSize(), ds->GetRasterYSize(), GDT_Byte, 0, 0, nullptr),
            CE_None);
  return v;
}

std::vector<std::string> names(const std::string& folder) {
  std::vector<std::string> n;
  for (const auto& e : fs::directory_iterator(folder)) n.push_back(e.path().filename().string());
  std::sort(n.begin(), n.end());
  return n;
}

TEST(BlockJournal, BlocksWrittenThroughTheSinkAreMarkedAndReadBack) {
  test::TempDir dir;
  EXPECT_EQ(io::journalFolderOf(dir.path("c.tif")), dir.path(".c.tif.partial"));
  const io::JournalFolders folders{io::journalFolderOf(dir.path("c.tif")), io::journalFolderOf(dir.path("p.tif"))};
  EXPECT_EQ(io::journalDescription(folders), "");
  io::startJournal(folders, "{\"run\": 1}");
  EXPECT_EQ(io::journalDescription(folders), "{\"run\": 1}");
  EXPECT_FALSE(io::journalHasBlocks(folders));

  io::GeoTiffSpec probabilities = classes12x10();
  probabilities.bands = 3;
  probabilities.has_nodata = false;
  probabilities.categories.clear();
  // A block is heard of once it is marked done (rank 0 appending it to a GeoTIFF output).
  std::vector<int> heard;
  io::JournalSink streamed(folders, classes12x10(), probabilities, kBlocks, [&](int block) {
    EXPECT_EQ(io::markedBlocks(folders), int64_t(heard.size()) + 1);
    heard.push_back(block);
  });
  io::JournalSink sink(folders, classes12x10(), probabilities, kBlocks);
  EXPECT_EQ(sink.probabilities(), ProbabilityType::Byte);
  std::vector<uint8_t> ids, probs;
  rows(0, 4, ids, probs);
  streamed.writeRows(0, 4, ids.data(), probs.data());
  EXPECT_EQ(heard, std::vector<int>{0});
  rows(7, 3, ids, probs);
  sink.writeRows(7, 3, ids.data(), probs.data());  // block 1 is another rank's
  test::expectErrorContaining([&] { sink.writeRows(5, 1, ids.data(), probs.data()); }, "do not start a block");
  EXPECT_TRUE(io::journalHasBlocks(folders));

  const auto done = io::finishedBlocks(folders);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].block, 0);
  EXPECT_EQ(done[1].block, 2);
  EXPECT_EQ(done[1].y0, 7);
  EXPECT_EQ(done[1].rows, 3);
  // Block 2's pixels per class id, counted from the ids written.
  std::vector<int64_t> counted(256, 0);
  for (int r = 7; r < 10; ++r)
    for (int c = 0; c < 12; ++c) ++counted[id(c, r)];
  EXPECT_EQ(done[1].id_pixels, counted);
  EXPECT_EQ(done[1].id_pixels[255], 3);
  EXPECT_EQ(std::accumulate(done[0].id_pixels.begin(), done[0].id_pixels.end(), int64_t(0)), 4 * 12);

  // Each block's files hold its rows, on the grid of the whole raster.
  rows(7, 3, ids, probs);
  EXPECT_EQ(readBand(folders.classBlock(2), 1), ids);
  EXPECT_EQ(readBand(folders.probabilityBlock(2), 3),
            std::vector<uint8_t>(probs.begin() + 2 * 36, probs.begin() + 3 * 36));
  io::Dataset ds = io::openRaster(folders.classBlock(2));
  double gt[6];
  ds->GetGeoTransform(gt);
  EXPECT_DOUBLE_EQ(gt[3], 2000 - 7 * 0.5);
  EXPECT_EQ(ds->GetRasterYSize(), 3);

  // A block being written when the run was killed (files without a marker), a marker cut
  // short, and a temporary: none is a finished block, and all go.
  rows(4, 3, ids, probs);
  {
    io::GeoTiffTileSink half(folders.classBlock(1), io::rowsSpec(classes12x10(), 4, 3), folders.probabilityBlock(1),
                             io::rowsSpec(probabilities, 4, 3));
    half.writeRows(0, 3, ids.data(), probs.data());
    half.finish();
    half.commit();
  }
  std::ofstream(fs::path(folders.classes) / "block-000000.json", std::ios::trunc) << "{\"block\": 0, \"y0";
  std::ofstream(fs::path(folders.classes) / ".block-000001.tif.tmp-99999999.tif") << "x";
  const auto left = io::finishedBlocks(folders);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].block, 2);
  EXPECT_EQ(names(folders.classes), (std::vector<std::string>{"block-000002.json", "block-000002.tif",
                                                              "block-000002.tif.aux.xml", "job.json"}));
  EXPECT_EQ(names(folders.probabilities), (std::vector<std::string>{"block-000002.tif"}));

  // A .vrt's parts: the markers and the description go, the blocks stay.
  io::dropJournalMarkers(folders);
  EXPECT_EQ(names(folders.classes), (std::vector<std::string>{"block-000002.tif", "block-000002.tif.aux.xml"}));
  EXPECT_FALSE(io::journalHasBlocks(folders));
  io::removeJournal(folders);
  EXPECT_FALSE(fs::exists(folders.classes));
  EXPECT_FALSE(fs::exists(folders.probabilities));
}

// Files changed after the stop: a block whose file was cut short or replaced since its mark
// (the sizes it records differ) is no finished block, and is named; a carry cut short is no
// carry (the windows above are computed again); forgetBlock drops a block whole.
TEST(BlockJournal, BlocksAndCarriesChangedAfterTheStopAreComputedAgain) {
  test::TempDir dir;
  const io::JournalFolders folders{io::journalFolderOf(dir.path("c.tif")), io::journalFolderOf(dir.path("p.tif"))};
  io::startJournal(folders, "{}");
  io::GeoTiffSpec probabilities = classes12x10();
  probabilities.bands = 3;
  probabilities.has_nodata = false;
  probabilities.categories.clear();
  io::JournalSink sink(folders, classes12x10(), probabilities, kBlocks, nullptr);
  std::vector<uint8_t> ids, probs;
  for (int k = 0; k < 3; ++k) {
    const int y = kBlocks[size_t(k)], n = (k + 1 < 3 ? kBlocks[size_t(k) + 1] : 10) - y;
    rows(y, n, ids, probs);
    BlendCarry carry{y + n, 2, 12, 3, std::vector<float>(72, 0.5f), std::vector<float>(24, 1.0f),
                     std::vector<uint8_t>(24, 1)};
    if (k < 2) sink.carry(k, carry);  // each writer keeps its last: block 1's
    sink.writeRows(y, n, ids.data(), probs.data());
  }
  ASSERT_EQ(io::finishedBlocks(folders).size(), 3u);
  const auto cut = [](const std::string& path) { fs::resize_file(path, fs::file_size(path) / 2); };
  cut(folders.probabilityBlock(0));                                                  // cut short
  std::ofstream(folders.classBlock(2), std::ios::binary | std::ios::app) << "more";  // another file
  std::vector<int> altered;
  const auto left = io::finishedBlocks(folders, &altered);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].block, 1);
  EXPECT_TRUE(left[0].carry);
  EXPECT_EQ(altered, (std::vector<int>{0, 2}));
  EXPECT_EQ(names(folders.classes), (std::vector<std::string>{"block-000001.carry", "block-000001.json",
                                                              "block-000001.tif", "block-000001.tif.aux.xml",
                                                              "job.json"}));
  EXPECT_EQ(names(folders.probabilities), (std::vector<std::string>{"block-000001.tif"}));
  EXPECT_EQ(io::readCarry(folders, 1).sums, std::vector<float>(72, 0.5f));
  fs::resize_file(dir.path(".c.tif.partial/block-000001.carry"), 100);
  const auto uncarried = io::finishedBlocks(folders);
  ASSERT_EQ(uncarried.size(), 1u);
  EXPECT_FALSE(uncarried[0].carry);
  EXPECT_FALSE(fs::exists(dir.path(".c.tif.partial/block-000001.carry")));
  io::forgetBlock(folders, 1);
  EXPECT_TRUE(io::finishedBlocks(folders).empty());
  EXPECT_EQ(names(folders.classes), std::vector<std::string>{"job.json"});
  EXPECT_TRUE(names(folders.probabilities).empty());
}

// A kill between a block's carry and its mark (the carry comes first) leaves the block before
// finished with its carry: the resume computes no window above the block it starts from.
TEST(BlockJournal, AKillBeforeAMarkKeepsTheCarryOfTheBlockBefore) {
  test::TempDir dir;
  const io::JournalFolders folders{io::journalFolderOf(dir.path("c.tif")), ""};
  io::startJournal(folders, "{}");
  io::JournalSink sink(folders, classes12x10(), classes12x10(), kBlocks, nullptr);
  std::vector<uint8_t> ids, probs;
  const auto carry = [](int y, float value) {
    return BlendCarry{y, 2, 12, 3, std::vector<float>(72, value), std::vector<float>(24, 1.0f),
                      std::vector<uint8_t>(24, 1)};
  };
  const int n = kBlocks[1] - kBlocks[0];
  rows(kBlocks[0], n, ids, probs);
  sink.carry(0, carry(kBlocks[1], 0.25f));
  sink.writeRows(kBlocks[0], n, ids.data(), nullptr);
  sink.carry(1, carry(kBlocks[2], 0.75f));  // killed here, before block 1's rows are marked
  const auto left = io::finishedBlocks(folders);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].block, 0);
  EXPECT_TRUE(left[0].carry) << "the newest marked block lost its carry";
  EXPECT_EQ(io::readCarry(folders, 0).sums, std::vector<float>(72, 0.25f));
  EXPECT_FALSE(fs::exists(dir.path(".c.tif.partial/block-000001.carry"))) << "an unmarked block's carry stays";
}

// Parts of a block in flight (block-K.part-W): read back as written, kept by a resume when
// they chain from column 0 and follow a finished block (the chain up to a part cut short),
// removed when the block is marked, when the block before is not finished, and with the
// markers when the journal becomes a .vrt's parts.
TEST(BlockJournal, PartsOfTheBlocksInFlightAreKeptUntilTheirBlockIsMarked) {
  test::TempDir dir;
  const io::JournalFolders folders{io::journalFolderOf(dir.path("c.tif")), ""};
  io::startJournal(folders, "{}");
  std::vector<uint8_t> ids, probs;
  const auto part = [](int block, int windows, int x0, int final_x, int x1, float value) {
    BlockPart p;
    p.block = block, p.windows = windows, p.y = kBlocks[size_t(block)], p.rows = 3, p.width = 12, p.classes = 3;
    p.x0 = x0, p.final_x = final_x, p.x1 = x1;
    const size_t plane = size_t(3 * (x1 - x0));
    p.sums.assign(3 * plane, value);
    p.weights.assign(plane, 1.0f + value);
    p.valid.assign(plane, 1);
    return p;
  };
  const std::string journal = dir.path(".c.tif.partial/");
  {
    io::JournalSink sink(folders, classes12x10(), classes12x10(), kBlocks, nullptr);
    sink.part(part(0, 2, 0, 4, 6, 0.5f));
    rows(kBlocks[0], kBlocks[1], ids, probs);
    sink.writeRows(kBlocks[0], kBlocks[1], ids.data(), nullptr);
    EXPECT_FALSE(fs::exists(journal + "block-000000.part-000002")) << "a marked block's part stays";
    sink.part(part(1, 2, 0, 4, 6, 0.25f));
    sink.part(part(1, 4, 4, 8, 10, 0.75f));
    sink.part(part(1, 6, 8, 10, 12, 1.0f));
  }
  {  // block 2 started too, but block 1 is not finished: a resume cannot start there
    io::JournalSink other(folders, classes12x10(), classes12x10(), kBlocks, nullptr);
    other.part(part(2, 2, 0, 4, 6, 0.5f));
  }
  const std::vector<BlockPart> read = io::readParts(folders, 1);
  ASSERT_EQ(read.size(), 3u);
  EXPECT_EQ(read[1].x0, 4);
  EXPECT_EQ(read[1].final_x, 8);
  EXPECT_EQ(read[1].x1, 10);
  EXPECT_EQ(read[1].sums, std::vector<float>(3 * 3 * 6, 0.75f));
  EXPECT_EQ(read[1].weights, std::vector<float>(3 * 6, 1.75f));
  EXPECT_TRUE(io::readParts(folders, 1, false)[2].sums.empty()) << "headers only";
  fs::resize_file(journal + "block-000001.part-000006", 100);  // the newest cut short
  std::vector<io::StartedBlock> started;
  const auto left = io::finishedBlocks(folders, nullptr, &started);
  ASSERT_EQ(left.size(), 1u);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].block, 1);
  EXPECT_EQ(started[0].windows, 4) << "the chain ends before the part cut short";
  EXPECT_EQ(names(folders.classes),
            (std::vector<std::string>{"block-000000.json", "block-000000.tif", "block-000000.tif.aux.xml",
                                      "block-000001.part-000002", "block-000001.part-000004", "job.json"}));
  const auto joined = joinParts(io::readParts(folders, 1));
  ASSERT_TRUE(joined);
  EXPECT_EQ(joined->windows, 4);
  EXPECT_EQ(joined->sums[0], 0.25f);
  EXPECT_EQ(joined->sums[9], 0.75f);
  {  // the resumed run marks block 1: its parts go, those of the stopped run too
    io::JournalSink sink(folders, classes12x10(), classes12x10(), kBlocks, nullptr);
    sink.adoptParts(io::readParts(folders, 1));
    rows(kBlocks[1], kBlocks[2] - kBlocks[1], ids, probs);
    sink.part(part(1, 6, 8, 10, 12, 1.0f));
    sink.writeRows(kBlocks[1], kBlocks[2] - kBlocks[1], ids.data(), nullptr);
  }
  for (const auto& name : names(folders.classes)) EXPECT_EQ(name.find(".part-"), std::string::npos) << name;
  io::JournalSink sink(folders, classes12x10(), classes12x10(), kBlocks, nullptr);
  sink.part(part(2, 2, 0, 4, 6, 0.5f));
  started.clear();
  io::finishedBlocks(folders, nullptr, &started);
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].block, 2);
  io::finishedBlocks(folders);  // without `started`: parts go
  EXPECT_TRUE(io::readParts(folders, 2).empty());
  sink.part(part(2, 2, 0, 4, 6, 0.5f));
  io::dropJournalMarkers(folders);
  EXPECT_EQ(names(folders.classes),
            (std::vector<std::string>{"block-000000.tif", "block-000000.tif.aux.xml", "block-000001.tif",
                                      "block-000001.tif.aux.xml"}));
}

TEST(BlockJournal, ALongOutputNameHasAJournalName) {
  test::TempDir dir;
  const std::string name(250, 'n');
  const std::string folder = io::journalFolderOf(dir.path(name + ".tif"));
  EXPECT_LE(fs::path(folder).filename().string().size(), 255u);
  EXPECT_EQ(fs::path(folder).filename().string().rfind(".geodl-", 0), 0u) << folder;
  io::startJournal({folder, ""}, "{}");
  EXPECT_TRUE(fs::is_directory(folder));
}

}  // namespace
}  // namespace geodl
