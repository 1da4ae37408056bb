// Classification of generated rasters with a model trained in the test program: quality,
// coverage of awkward sizes, georeferencing, blending, outputs, and bad input.
#include <gtest/gtest.h>

#include "core/reference_missing.h"
#include <torch/script.h>
#include <torch/torch.h>

#include <gdal_priv.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "app/classify.h"
#include "app/ml_fixtures.h"
#include "base/errors.h"
#include "model/model_file.h"
#include "core/test_support.h"
#include "io/gdal_util.h"
#include "io/block_journal.h"
#include "io/gis_fixtures.h"

namespace geodl {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

std::string scene(const TempDir& dir, const std::string& name, int width, int height,
                  int epsg = 32618, int bands = 3, GDALDataType type = GDT_Byte, double pixel = 0.5) {
  test::RasterSpec spec;
  spec.width = width;
  spec.height = height;
  spec.bands = bands;
  spec.type = type;
  spec.epsg = epsg;
  spec.geotransform = {500000, pixel, 0, 4500000, 0, -pixel};
  spec.value = [](int x, int y, int b) { return test::sceneValue(x, y, b); };
  return test::makeRaster(dir.path(name), spec);
}

struct Raster {
  int width = 0, height = 0, bands = 0;
  std::vector<std::vector<double>> values;  // per band
  std::array<double, 6> gt{};
  std::string wkt;
  GDALDataset* ds = nullptr;
};

Raster readAll(const std::string& path) {
  Raster r;
  io::Dataset ds(static_cast<GDALDataset*>(GDALOpen(path.c_str(), GA_ReadOnly)));
  EXPECT_TRUE(ds) << path;
  if (!ds) return r;
  r.width = ds->GetRasterXSize();
  r.height = ds->GetRasterYSize();
  r.bands = ds->GetRasterCount();
  ds->GetGeoTransform(r.gt.data());
  r.wkt = ds->GetProjectionRef() ? ds->GetProjectionRef() : "";
  for (int b = 1; b <= r.bands; ++b) {
    std::vector<double> v(size_t(r.width) * r.height);
    EXPECT_EQ(ds->GetRasterBand(b)->RasterIO(GF_Read, 0, 0, r.width, r.height, v.data(), r.width,
                                             r.height, GDT_Float64, 0, 0, nullptr), CE_None);
    r.values.push_back(v);
  }
  return r;
}

ClassifyOptions options(const TempDir& dir, const std::string& input, const std::string& out) {
  ClassifyOptions o;
  o.input = input;
  o.model_path = test::trainedModel();
  o.output = dir.path(out);
  o.window = 32;
  o.overlap = 25;
  o.run.threads = 2;
  return o;
}

// What QGIS offers to continue: a stopped classification into the output with finished blocks,
// of the same raster (by any spelling of its path) with the same model; none otherwise.
TEST(Classify, AStoppedRunIsOfferedOnlyForItsRasterAndModel) {
  TempDir dir;
  for (const char* name : {"a.tif", "b.tif", "m.pt", "n.pt"}) std::ofstream(dir.path(name)) << name;
  const std::string output = dir.path("c.tif");
  const io::JournalFolders folders{io::journalFolderOf(output), ""};
  io::startJournal(folders, nlohmann::json{{"input", {{"path", dir.path("a.tif")}}},
                                           {"model", {{"path", dir.path("m.pt")}}},
                                           {"plan", {{"blocks", 3}}}}
                                .dump());
  EXPECT_FALSE(stoppedClassification(output, dir.path("a.tif"), dir.path("m.pt")));  // no block finished
  std::ofstream(fs::path(folders.classes) / "block-000001.json") << "{}";
  const auto stopped = stoppedClassification(output, dir.path("./a.tif"), dir.path("m.pt"));
  ASSERT_TRUE(stopped);
  EXPECT_EQ(stopped->finished, 1);
  EXPECT_EQ(stopped->blocks, 3);
  EXPECT_FALSE(stoppedClassification(output, dir.path("b.tif"), dir.path("m.pt")));
  EXPECT_FALSE(stoppedClassification(output, dir.path("a.tif"), dir.path("n.pt")));
  EXPECT_FALSE(stoppedClassification(dir.path("other.tif"), dir.path("a.tif"), dir.path("m.pt")));
}

TEST(Classify, KnownSceneWellAboveChanceWithGeoreferencingColoursAndProbabilities) {
  TempDir dir;
  const std::string input = scene(dir, "scene.tif", 150, 110);
  ClassifyOptions o = options(dir, input, "classes.tif");
  o.probabilities = dir.path("probabilities.tif");
  o.batch_size = 0;  // automatic
  o.run.memory_budget_mib = 64;
  NullProgress progress;
  const ClassifyResult r = classify(o, progress);
  EXPECT_GE(r.batch_size, 1);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.windows, r.windows_computed);
  const Raster out = readAll(o.output), in = readAll(input);
  ASSERT_EQ(out.width, 150);
  ASSERT_EQ(out.height, 110);
  EXPECT_EQ(out.gt, in.gt);
  EXPECT_EQ(out.wkt, in.wkt);
  int64_t correct = 0, inter = 0, uni = 0;
  for (int y = 0; y < 110; ++y)
    for (int x = 0; x < 150; ++x) {
      const int got = int(out.values[0][size_t(y) * 150 + x]), truth = test::sceneTruth(x, y);
      ASSERT_NE(got, 255) << "pixel " << x << "," << y << " left unclassified";
      correct += got == truth;
      inter += got == 1 && truth == 1;
      uni += got == 1 || truth == 1;
    }
  EXPECT_GT(double(correct) / (150 * 110), 0.95);
  EXPECT_GT(double(inter) / double(uni), 0.7);  // building IoU; chance is about 0.16

  io::Dataset ds(static_cast<GDALDataset*>(GDALOpen(o.output.c_str(), GA_ReadOnly)));
  GDALRasterBand* band = ds->GetRasterBand(1);
  ASSERT_NE(band->GetColorTable(), nullptr);
  const GDALColorEntry* building = band->GetColorTable()->GetColorEntry(1);
  EXPECT_EQ(building->c1, 0xe3);  // #e31a1c
  char** names = band->GetCategoryNames();
  ASSERT_NE(names, nullptr);
  EXPECT_STREQ(names[0], "background");
  EXPECT_STREQ(names[1], "building");
  int has_nodata = 0;
  EXPECT_EQ(band->GetNoDataValue(&has_nodata), 255);
  EXPECT_TRUE(has_nodata);
  char** structure = ds->GetMetadata("IMAGE_STRUCTURE");
  EXPECT_STREQ(CSLFetchNameValue(structure, "COMPRESSION"), "DEFLATE");
  int bx = 0, by = 0;
  band->GetBlockSize(&bx, &by);
  EXPECT_EQ(bx, 256);  // tiled

  const Raster p = readAll(o.probabilities);
  ASSERT_EQ(p.bands, 2);
  for (size_t i = 0; i < p.values[0].size(); ++i) {
    const double sum = p.values[0][i] + p.values[1][i];
    ASSERT_GE(sum, 254);
    ASSERT_LE(sum, 256);
    ASSERT_EQ(p.values[1][i] > p.values[0][i], out.values[0][i] == 1) << i;
  }
  for (const auto& entry : fs::directory_iterator(dir.root()))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos);
}

TEST(Classify, PolygonsMatchTheClassRaster) {
  TempDir dir;
  const std::string input = scene(dir, "scene.tif", 90, 70);
  ClassifyOptions o = options(dir, input, "classes.tif");
  o.polygons = dir.path("classes.gpkg");
  NullProgress progress;
  const ClassifyResult r = classify(o, progress);
  EXPECT_GT(r.polygons, 0);
  EXPECT_EQ(r.polygons_dropped, 0);
  // The polygons of each class cover exactly its pixels (0.5 x 0.5 m each).
  io::Dataset ds(static_cast<GDALDataset*>(GDALOpenEx(o.polygons.c_str(), GDAL_OF_VECTOR, nullptr, nullptr, nullptr)));
  ASSERT_TRUE(ds);
  OGRLayer* layer = ds->GetLayerByName("classes");
  ASSERT_NE(layer, nullptr);
  std::vector<double> area(2, 0.0);
  for (auto& f : *layer) {
    const int id = f->GetFieldAsInteger("class_id");
    ASSERT_TRUE(id == 0 || id == 1);
    EXPECT_STREQ(f->GetFieldAsString("class_name"), id ? "building" : "background");
    area[size_t(id)] += f->GetFieldAsDouble("area");
  }
  for (int c = 0; c < 2; ++c) EXPECT_NEAR(area[size_t(c)], r.class_pixels[size_t(c)] * 0.25, 1e-6) << c;
  // A minimum area drops the small ones.
  o.polygons = dir.path("large.gpkg");
  o.min_area = 40;  // m2: 160 pixels
  const ClassifyResult large = classify(o, progress);
  EXPECT_GT(large.polygons_dropped, 0);
  EXPECT_LT(large.polygons, r.polygons);
}

TEST(Classify, EveryPixelClassifiedForAwkwardSizes) {
  TempDir dir;
  for (auto [w, h] : std::vector<std::pair<int, int>>{{1, 1}, {1, 40}, {31, 33}, {32, 32}, {100, 3}, {70, 45}}) {
    const std::string name = std::to_string(w) + "x" + std::to_string(h);
    const std::string input = scene(dir, name + ".tif", w, h);
    ClassifyOptions o = options(dir, input, name + "_out.tif");
    NullProgress progress;
    classify(o, progress);
    const Raster out = readAll(o.output);
    ASSERT_EQ(out.width, w);
    ASSERT_EQ(out.height, h);
    for (double v : out.values[0]) ASSERT_TRUE(v == 0 || v == 1) << name << " has " << v;
  }
}

TEST(Classify, OneWindowEqualsWholeImageAndBlendedTilesAgreeWithIt) {
  TempDir dir;
  const std::string input = scene(dir, "scene.tif", 64, 64);
  // One window over the whole image: exactly the model's own output.
  ClassifyOptions whole = options(dir, input, "whole.tif");
  whole.window = 64;
  whole.probabilities = dir.path("whole_p.tif");
  whole.probabilities_float = true;
  NullProgress progress;
  classify(whole, progress);
  const LoadedModel model = loadModelFile(test::trainedModel());
  auto x = torch::empty({1, 3, 64, 64});
  for (int b = 0; b < 3; ++b)
    for (int y = 0; y < 64; ++y)
      for (int c = 0; c < 64; ++c)
        x[0][b][y][c] = float((test::sceneValue(c, y, b) - model.info.band_mean[b]) / model.info.band_std[b]);
  torch::NoGradGuard no_grad;
  const auto expected = torch::softmax(model.model->forward(x), 1)[0];
  const Raster p = readAll(whole.probabilities);
  double worst = 0;
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 64 * 64; ++i)
      worst = std::max(worst, std::abs(p.values[c][i] - expected[c].reshape({-1})[i].item<double>()));
  EXPECT_LT(worst, 1e-5);

  // Tiles of 32 with 25% overlap, blended: the same classes almost everywhere.
  ClassifyOptions tiled = options(dir, input, "tiled.tif");
  classify(tiled, progress);
  const Raster a = readAll(whole.output), b = readAll(tiled.output);
  int same = 0;
  for (int i = 0; i < 64 * 64; ++i) same += a.values[0][i] == b.values[0][i];
  EXPECT_GT(same / 4096.0, 0.97);
}

// Large windows keep quality: against whole-image inference (one window over a 1024^2
// raster), windows of 256 px with the automatic overlap agree on at least 99.9% of the
// pixels, and so do the defaults (512 px windows); a tight memory budget takes smaller ones.
TEST(Classify, LargeWindowsAgreeWithWholeImageInference) {
  TempDir dir;
  const std::string input = scene(dir, "big.tif", 1024, 1024);
  NullProgress progress;
  ClassifyOptions whole = options(dir, input, "whole.tif");
  whole.window = 1024;
  const ClassifyResult w = classify(whole, progress);
  EXPECT_EQ(w.windows_computed, 1);
  EXPECT_DOUBLE_EQ(w.computed_ratio, 1.0);
  ClassifyOptions tiled = options(dir, input, "tiled.tif");
  tiled.window = 256;
  tiled.overlap = -1;  // automatic: 32 px for this model's 32 px samples
  const ClassifyResult t = classify(tiled, progress);
  EXPECT_EQ(t.window, 256);
  EXPECT_EQ(t.overlap, 32);
  EXPECT_EQ(t.windows_computed, 25);
  EXPECT_NEAR(t.computed_ratio, 25 * 256.0 * 256 / (1024.0 * 1024), 1e-12);
  const Raster a = readAll(whole.output), b = readAll(tiled.output);
  int64_t same = 0;
  for (size_t i = 0; i < a.values[0].size(); ++i) same += a.values[0][i] == b.values[0][i];
  EXPECT_GE(double(same) / double(a.values[0].size()), 0.999);

  ClassifyOptions automatic = options(dir, input, "automatic.tif");
  automatic.window = 0;
  automatic.overlap = -1;
  const ClassifyResult d = classify(automatic, progress);
  EXPECT_EQ(d.window, 512);  // the largest automatic window: the budget allows it
  EXPECT_EQ(d.overlap, 32);
  const Raster c = readAll(automatic.output);
  same = 0;
  for (size_t i = 0; i < a.values[0].size(); ++i) same += a.values[0][i] == c.values[0][i];
  EXPECT_GE(double(same) / double(a.values[0].size()), 0.999);
  automatic.output = dir.path("tight.tif");
  automatic.run.memory_budget_mib = 48;
  const ClassifyResult tight = classify(automatic, progress);
  EXPECT_LT(tight.window, 512);
  EXPECT_GE(tight.window, 32);
  EXPECT_EQ(tight.window % 32, 0);
}

TEST(Classify, NodataExtentTtaAndCog) {
  TempDir dir;
  test::RasterSpec spec;
  spec.width = 140;
  spec.height = 60;
  spec.bands = 3;
  spec.epsg = 32618;
  spec.nodata = 0;
  spec.value = [](int x, int y, int b) { return x < 10 ? 0.0 : test::sceneValue(x, y, b); };
  const std::string input = test::makeRaster(dir.path("nodata.tif"), spec);
  ClassifyOptions o = options(dir, input, "nodata_out.tif");
  o.tta = true;
  o.cog = true;
  // Extent: map x 1020..1060 (geotransform 1000, 1 px) and all rows.
  o.has_extent = true;
  o.extent[0] = 1020;
  o.extent[2] = 1060;
  o.extent[1] = 2000 - 60;
  o.extent[3] = 2000;
  NullProgress progress;
  const ClassifyResult r = classify(o, progress);
  EXPECT_LT(r.windows_computed, r.windows);  // windows away from the extent are skipped
  const Raster out = readAll(o.output);
  for (int y = 0; y < 60; ++y)
    for (int x = 0; x < 140; ++x) {
      const double v = out.values[0][size_t(y) * 140 + x];
      if (x < 20 || x >= 60)
        ASSERT_EQ(v, 255) << x << "," << y;  // nodata input or outside the extent
      else
        ASSERT_EQ(v, test::sceneTruth(x, y)) << x << "," << y;
    }
  io::Dataset ds(static_cast<GDALDataset*>(GDALOpen(o.output.c_str(), GA_ReadOnly)));
  EXPECT_STREQ(CSLFetchNameValue(ds->GetMetadata("IMAGE_STRUCTURE"), "LAYOUT"), "COG");

  o.extent[0] = 5000;
  o.extent[2] = 6000;
  test::expectErrorContaining([&] { classify(o, progress); }, "lies outside the raster");
}

TEST(Classify, PolygonMaskComputesOnlyInsideIt) {
  TempDir dir;
  test::RasterSpec spec;  // geotransform 1000, 1 px, north up from 2000
  spec.width = 140;
  spec.height = 60;
  spec.bands = 3;
  spec.epsg = 32618;
  spec.value = [](int x, int y, int b) { return test::sceneValue(x, y, b); };
  const std::string input = test::makeRaster(dir.path("scene.tif"), spec);
  // Columns 10-49 of rows 10-49, and columns 100-129 of rows 40-54.
  const std::string mask = test::makeVector(dir.path("mask.gpkg"), 32618, "name", OFTString,
                                            {{test::box(1010, 1950, 1050, 1990), "field"},
                                             {test::box(1100, 1945, 1130, 1960), "park"}});
  ClassifyOptions o = options(dir, input, "masked.tif");
  o.mask = mask;
  NullProgress progress;
  const ClassifyResult r = classify(o, progress);
  EXPECT_LT(r.windows_computed, r.windows);  // windows away from the polygons are skipped
  const Raster out = readAll(o.output);
  int64_t inside = 0;
  for (int y = 0; y < 60; ++y)
    for (int x = 0; x < 140; ++x) {
      const bool in = (x >= 10 && x < 50 && y >= 10 && y < 50) || (x >= 100 && x < 130 && y >= 40 && y < 55);
      const double v = out.values[0][size_t(y) * 140 + x];
      if (!in) {
        ASSERT_EQ(v, 255) << x << "," << y << " is outside the mask";
      } else {
        ASSERT_NE(v, 255) << x << "," << y << " is inside the mask";
        inside += v == test::sceneTruth(x, y);
      }
    }
  EXPECT_GT(double(inside) / (40 * 40 + 30 * 15), 0.95);
  EXPECT_EQ(r.nodata_pixels, 140 * 60 - (40 * 40 + 30 * 15));

  // A mask elsewhere, or of points: refused, nothing written.
  ClassifyOptions far = options(dir, input, "far.tif");
  far.mask = test::makeVector(dir.path("far.gpkg"), 32618, "name", OFTString,
                              {{test::box(9000, 9000, 9100, 9100), "x"}});
  test::expectErrorContaining([&] { classify(far, progress); }, "do not overlap");
  EXPECT_FALSE(fs::exists(far.output));
  far.mask = test::makeVector(dir.path("points.gpkg"), 32618, "name", OFTString, {{"POINT (1020 1980)", "x"}});
  test::expectErrorContaining([&] { classify(far, progress); }, "a mask must be polygons");
  EXPECT_FALSE(fs::exists(far.output));
}

// Final rows are classified in chunks of 2048 columns: a wider raster is right on both sides.
TEST(Classify, WideRasterIsRightAcrossColumnChunks) {
  TempDir dir;
  const int width = 2100, height = 40;
  const std::string input = scene(dir, "wide.tif", width, height);
  ClassifyOptions o = options(dir, input, "wide_out.tif");
  o.probabilities = dir.path("wide_p.tif");
  NullProgress progress;
  const ClassifyResult r = classify(o, progress);
  const Raster out = readAll(o.output), p = readAll(o.probabilities);
  int64_t correct[2] = {0, 0}, total[2] = {0, 0};
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const size_t i = size_t(y) * width + x;
      ASSERT_NE(out.values[0][i], 255) << x << "," << y;
      ASSERT_EQ(p.values[1][i] > p.values[0][i], out.values[0][i] == 1) << x << "," << y;
      correct[x >= 2048] += out.values[0][i] == test::sceneTruth(x, y);
      ++total[x >= 2048];
    }
  EXPECT_GT(double(correct[0]) / double(total[0]), 0.95);
  EXPECT_GT(double(correct[1]) / double(total[1]), 0.95);
  EXPECT_EQ(r.class_pixels[0] + r.class_pixels[1], int64_t(width) * height);
}

TEST(Classify, TorchScriptModelWithASidecar) {
  if (!test::pythonTorchAvailable()) GEODL_REFERENCE_MISSING("Debian's python3-torch is not installed");
  TempDir dir;
  const std::string model = dir.path("scripted.pt");
  ASSERT_TRUE(test::runPythonReference("write_torchscript_model.py", model));
  const std::string input = scene(dir, "scene.tif", 32, 32);
  ClassifyOptions o;
  o.input = input;
  o.output = dir.path("classes.tif");
  o.run.threads = 2;
  o.model_path = model;  // the sidecar scripted.json is found beside it
  o.window = 0;          // the sidecar's sample size, 32: one window, the whole image
  o.probabilities = dir.path("p.tif");
  o.probabilities_float = true;
  NullProgress progress;
  classify(o, progress);
  // The same module run by hand on the normalized image.
  auto module = torch::jit::load(model);
  auto x = torch::empty({1, 3, 32, 32});
  const double mean[3] = {100, 101, 102};
  for (int b = 0; b < 3; ++b)
    for (int y = 0; y < 32; ++y)
      for (int c = 0; c < 32; ++c) x[0][b][y][c] = float((test::sceneValue(c, y, b) - mean[b]) / 50.0);
  torch::NoGradGuard no_grad;
  const auto expected = torch::softmax(module.forward({x}).toTensor(), 1)[0];
  const Raster p = readAll(o.probabilities);
  double worst = 0;
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 32 * 32; ++i)
      worst = std::max(worst, std::abs(p.values[c][i] - expected[c].reshape({-1})[i].item<double>()));
  EXPECT_LT(worst, 1e-5);
  io::Dataset ds(static_cast<GDALDataset*>(GDALOpen(o.output.c_str(), GA_ReadOnly)));
  EXPECT_EQ(ds->GetRasterBand(1)->GetColorTable()->GetColorEntry(1)->c1, 255);
  EXPECT_STREQ(ds->GetRasterBand(1)->GetCategoryNames()[1], "building");

  // Without a sidecar: a clear error.
  std::filesystem::remove(dir.path("scripted.json"));
  o.output = dir.path("none.tif");
  test::expectErrorContaining([&] { classify(o, progress); }, "no sidecar");
}

class CancelAfter : public Progress {
 public:
  void report(double, const std::string&) override { ++reports_; }
  bool cancelled() const override { return reports_ >= 2; }

 private:
  int reports_ = 0;
};

// A folder's rasters are what GDAL opens as rasters, whatever their extension; not its other
// files (a vector, text under a raster's name, GDAL's sidecars).
TEST(Classify, FolderRastersAreWhatGdalOpens) {
  TempDir dir;
  fs::create_directories(dir.path("in"));
  const std::string a = scene(dir, "in/a.tif", 20, 20);
  const std::string b = scene(dir, "in/B.TIFF", 20, 20);
  const std::string c = scene(dir, "in/c.raster", 20, 20);  // a GeoTIFF by any other name
  fs::copy_file(a, dir.path("in/a.tif.ovr"));
  std::ofstream(dir.path("in/d.tif")) << "not a raster";
  std::ofstream(dir.path("in/a.tif.aux.xml")) << "<PAMDataset/>";
  fs::create_directories(dir.path("in/sub.tif"));
  EXPECT_EQ(rastersOf(dir.path("in")), (std::vector<std::string>{b, a, c}));
  EXPECT_EQ(rastersOf(a), (std::vector<std::string>{a}));
  fs::create_directories(dir.path("empty"));
  test::expectErrorContaining([&] { rastersOf(dir.path("empty")); }, "holds no raster GDAL can open");
}

TEST(Classify, BadInputIsRefusedAndNothingIsWritten) {
  TempDir dir;
  const std::string input = scene(dir, "scene.tif", 100, 80);
  NullProgress progress;
  const auto fails = [&](ClassifyOptions o, const std::string& part) {
    test::expectErrorContaining([&] { classify(o, progress); }, part);
    EXPECT_FALSE(fs::exists(o.output)) << part;
  };
  ClassifyOptions o = options(dir, input, "out.tif");
  o.model_path = dir.path("missing.pt");
  fails(o, "cannot read the model file");
  {
    std::ofstream(dir.path("corrupt.pt")) << "PK not really";
  }
  o.model_path = dir.path("corrupt.pt");
  fails(o, "is a file of another kind, not a model file");
  o = options(dir, scene(dir, "four.tif", 40, 40, 32618, 4), "out.tif");
  fails(o, "has 4 bands but the model expects 3");
  o = options(dir, scene(dir, "u16.tif", 40, 40, 32618, 3, GDT_UInt16), "out.tif");
  fails(o, "holds UInt16 pixels but the model was trained on Byte ones");
  // The ranges are the table's, for options filled by code too, in the words of a flag's.
  o = options(dir, input, "out.tif");
  o.overlap = 50;
  fails(o, "the option overlap (inference.overlap, --overlap, OVERLAP) has the value '50', which is not a number "
           "from -1 to 49; give such a value");
  o = options(dir, input, "out.tif");
  o.batch_size = -1;
  fails(o, "the option batch_size (inference.batch_size, --batch-size, BATCH_SIZE) has the value '-1', which is not "
           "a whole number from 0 to 10000");
  // The output formats, checked by the job (QGIS and the CLI say the same); .tiff is a GeoTIFF.
  o = options(dir, input, "out.png");
  fails(o, "the class raster is written as GeoTIFF: give a .tif or .tiff file (got '" + dir.path("out.png") + "')");
  o = options(dir, input, "out.tif");
  o.probabilities = dir.path("p.jpg");
  fails(o, "the probability raster is written as GeoTIFF");
  o = options(dir, input, "out.tif");
  o.polygons = dir.path("p.shp");
  fails(o, "the polygon file is written as a GeoPackage: give a .gpkg file");
  o = options(dir, input, "out.tif");
  o.run.device = "gpu";
  fails(o, "has the value 'gpu', which is not one of auto, cpu, cuda, cuda:N");
  std::ofstream(dir.path("a_file")) << "in the way";
  o = options(dir, input, "a_file/out.tif");
  fails(o, "cannot create the output folder");
  // A missing folder is created, and removed again when the run fails.
  o = options(dir, input, "new/deeper/out.tif");
  o.model_path = dir.path("missing.pt");
  fails(o, "cannot read the model file");
  EXPECT_FALSE(fs::exists(dir.path("new")));
  o = options(dir, input, "out.tif");
  CancelAfter cancel;
  EXPECT_THROW(classify(o, cancel), Cancelled);
  EXPECT_FALSE(fs::exists(o.output));
  for (const auto& entry : fs::directory_iterator(dir.root()))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos) << entry.path();

  // No CRS: classified, with a warning, and no CRS in the output.
  o = options(dir, scene(dir, "nocrs.tif", 40, 40, 0), "nocrs_out.tif");
  const ClassifyResult r = classify(o, progress);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("has no CRS"), std::string::npos);
  EXPECT_TRUE(readAll(o.output).wkt.empty());
}

// Imagery unlike the training data: its pixel type, its CRS's units, a pixel size more than
// 2x off and values far outside the trained range are each refused, naming what differs and
// the fix, with nothing written; accept_mismatch classifies them with a warning. The model
// file keeps the training samples' value range; a model without one is not checked for it.
TEST(Classify, ImageryUnlikeTheTrainingDataIsRefusedUnlessAccepted) {
  TempDir dir;
  NullProgress progress;
  const LoadedModel trained = loadModelFile(test::trainedModel());
  ASSERT_EQ(trained.info.band_min.size(), 3u);
  ASSERT_EQ(trained.info.band_max.size(), 3u);
  for (int b = 0; b < 3; ++b) {  // sceneValue: 40 + 110 * truth + (0..30) + band
    EXPECT_GE(trained.info.band_min[size_t(b)], 40 + b);
    EXPECT_LE(trained.info.band_max[size_t(b)], 180 + b);
    EXPECT_LT(trained.info.band_min[size_t(b)], trained.info.band_max[size_t(b)]);
  }
  const std::string accept = "or set the option accept_mismatch (inference.accept_mismatch, --accept-mismatch, "
                             "ACCEPT_MISMATCH) to classify it anyway";
  const auto refusedThenAccepted = [&](ClassifyOptions o, const std::string& what) {
    SCOPED_TRACE(what);
    test::expectErrorContaining([&] { classify(o, progress); }, what);
    test::expectErrorContaining([&] { classify(o, progress); }, accept);
    EXPECT_FALSE(fs::exists(o.output));
    o.accept_mismatch = true;
    const ClassifyResult r = classify(o, progress);
    EXPECT_TRUE(fs::exists(o.output));
    bool warned = false;
    for (const auto& w : r.warnings) warned = warned || (w.find(what) != std::string::npos &&
                                                         w.find("classified anyway (accept_mismatch)") != std::string::npos);
    EXPECT_TRUE(warned);
  };
  refusedThenAccepted(options(dir, scene(dir, "u16.tif", 40, 40, 32618, 3, GDT_UInt16), "u16_out.tif"),
                      "holds UInt16 pixels but the model was trained on Byte ones");
  refusedThenAccepted(options(dir, scene(dir, "coarse.tif", 40, 40, 32618, 3, GDT_Byte, 1.5), "coarse_out.tif"),
                      "has pixels of 1.5 m but the model was trained on pixels of 0.5 m (3 times larger)");
  refusedThenAccepted(options(dir, scene(dir, "fine.tif", 40, 40, 32618, 3, GDT_Byte, 0.2), "fine_out.tif"),
                      "has pixels of 0.2 m but the model was trained on pixels of 0.5 m (2.5 times smaller)");
  refusedThenAccepted(options(dir, scene(dir, "degrees.tif", 40, 40, 4326, 3, GDT_Byte, 0.00001), "degrees_out.tif"),
                      "is in a CRS in degrees but the model was trained on imagery in metres");
  // 1.8x: a warning only. The same size in feet (EPSG:2263, NAD83 / New York Long Island, US
  // survey feet) is the model's: no warning.
  ClassifyOptions o = options(dir, scene(dir, "near.tif", 40, 40, 32618, 3, GDT_Byte, 0.9), "near_out.tif");
  ClassifyResult r = classify(o, progress);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("has pixels of 0.9 m but the model was trained on pixels of 0.5 m: results may be poor"),
            std::string::npos);
  o = options(dir, scene(dir, "feet.tif", 40, 40, 2263, 3, GDT_Byte, 0.5 / 0.3048006096012192), "feet_out.tif");
  r = classify(o, progress);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();

  // A model trained on values 100-101 in its first band: the scene's reach far beyond them.
  SegmentationModel model = trained.model;
  ModelInfo narrow = trained.info;
  narrow.band_min[0] = 100;
  narrow.band_max[0] = 101;
  saveModelFile(dir.path("narrow.pt"), narrow, *model);
  o = options(dir, scene(dir, "scene.tif", 40, 40), "narrow_out.tif");
  o.model_path = dir.path("narrow.pt");
  refusedThenAccepted(o, "band 1 of '" + o.input + "' has values from ");
  test::expectErrorContaining([&] { o.accept_mismatch = false; classify(o, progress); },
                              "but the model was trained on 100 to 101 in that band: the imagery is scaled otherwise");
  // A model file from before the range was recorded: nothing to compare.
  narrow.band_min.clear();
  narrow.band_max.clear();
  saveModelFile(dir.path("norange.pt"), narrow, *model);
  o = options(dir, scene(dir, "scene2.tif", 40, 40), "norange_out.tif");
  o.model_path = dir.path("norange.pt");
  EXPECT_TRUE(classify(o, progress).warnings.empty());

  // A model that knows its bands' wavelengths (red, green, blue): a raster whose metadata puts
  // its bands in another order is refused naming the first band that differs; one within 0.05
  // micrometres, or without wavelength metadata, is classified without a word.
  ModelInfo rgb = trained.info;
  rgb.spec.wavelengths = {0.665, 0.56, 0.49};
  saveModelFile(dir.path("rgb.pt"), rgb, *model);
  EXPECT_EQ(loadModelFile(dir.path("rgb.pt")).info.spec.wavelengths, rgb.spec.wavelengths);
  const auto withWavelengths = [&](const std::string& name, std::vector<double> um) {
    const std::string path = scene(dir, name, 40, 40);
    GDALDataset* ds = GDALDataset::Open(path.c_str(), GDAL_OF_RASTER | GDAL_OF_UPDATE);
    for (int b = 0; b < 3; ++b)
      ds->GetRasterBand(b + 1)->SetMetadataItem("CENTRAL_WAVELENGTH_UM", std::to_string(um[size_t(b)]).c_str(), "IMAGERY");
    GDALClose(ds);
    return path;
  };
  o = options(dir, withWavelengths("bgr.tif", {0.49, 0.56, 0.665}), "bgr_out.tif");
  o.model_path = dir.path("rgb.pt");
  refusedThenAccepted(o, "band 1 of '" + o.input + "' is at 0.49 micrometres (its metadata) but the model's band 1 "
                         "was at 0.665 (the model's bands: 0.665, 0.56, 0.49)");
  o = options(dir, withWavelengths("rgb_near.tif", {0.65, 0.56, 0.52}), "rgb_near_out.tif");
  o.model_path = dir.path("rgb.pt");
  EXPECT_TRUE(classify(o, progress).warnings.empty());
  o = options(dir, scene(dir, "scene3.tif", 40, 40), "rgb_none_out.tif");
  o.model_path = dir.path("rgb.pt");
  EXPECT_TRUE(classify(o, progress).warnings.empty());
}

// resample: a raster at 0.25 m whose every 2 x 2 block repeats a pixel of a 0.5 m scene (the
// model's size) is averaged back to that scene exactly, so its classes are the scene's, each
// repeated over its block; a pixel that is nodata in the raster is nodata in the output. At
// 1 m the outputs take the raster's grid too, with the summary's counts those of the raster
// written; within 1% of the model's size nothing is resampled; what cannot be resampled is
// refused with the reason.
TEST(Classify, ResampledToTheModelsPixelSizeWithTheOutputsAtTheRastersGrid) {
  TempDir dir;
  NullProgress progress;
  const int w = 70, h = 54;
  ClassifyOptions o = options(dir, scene(dir, "scene.tif", w, h), "scene_out.tif");
  o.probabilities = dir.path("scene_probabilities.tif");
  const ClassifyResult reference = classify(o, progress);
  const Raster coarse = readAll(o.output), coarse_p = readAll(o.probabilities);

  test::RasterSpec spec;
  spec.width = 2 * w;
  spec.height = 2 * h;
  spec.bands = 3;
  spec.geotransform = {500000, 0.25, 0, 4500000, 0, -0.25};
  spec.nodata = 0;
  spec.value = [](int x, int y, int b) { return x == 9 && y == 13 ? 0.0 : test::sceneValue(x / 2, y / 2, b); };
  o = options(dir, test::makeRaster(dir.path("fine.tif"), spec), "fine_out.tif");
  o.probabilities = dir.path("fine_probabilities.tif");
  const ClassifyResult unresampled = classify(o, progress);  // 2x: a warning, beyond it a refusal
  ASSERT_EQ(unresampled.warnings.size(), 1u);
  EXPECT_NE(unresampled.warnings[0].find("results may be poor at another scale"), std::string::npos);
  o.resample = true;
  const ClassifyResult r = classify(o, progress);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  EXPECT_EQ(r.width, 2 * w);
  EXPECT_EQ(r.height, 2 * h);
  const Raster fine = readAll(o.output), fine_p = readAll(o.probabilities);
  ASSERT_EQ(fine.width, 2 * w);
  ASSERT_EQ(fine.height, 2 * h);
  EXPECT_EQ(fine.gt, spec.geotransform);
  EXPECT_EQ(fine.wkt, coarse.wkt);
  ASSERT_EQ(fine_p.bands, coarse_p.bands);
  std::vector<int64_t> counted(256, 0);
  int64_t differ = 0;
  for (int y = 0; y < 2 * h; ++y)
    for (int x = 0; x < 2 * w; ++x) {
      const double got = fine.values[0][size_t(y) * 2 * w + x];
      ++counted[size_t(got)];
      const double want = x == 9 && y == 13 ? 255 : coarse.values[0][size_t(y / 2) * w + x / 2];
      differ += got != want;
    }
  EXPECT_EQ(differ, 0);
  EXPECT_EQ(r.nodata_pixels, 1);
  for (size_t k = 0; k < r.classes.size(); ++k) {
    EXPECT_EQ(r.class_pixels[k], counted[size_t(r.classes[k].id)]) << r.classes[k].name;
    EXPECT_EQ(r.class_pixels[k], 4 * reference.class_pixels[k] - (coarse.values[0][6 * w + 4] == r.classes[k].id));
  }
  // The probabilities, interpolated bilinearly: at the nodata pixel 0; elsewhere between the
  // scene's in the 3 x 3 pixels around.
  for (int b = 0; b < fine_p.bands; ++b) {
    EXPECT_EQ(fine_p.values[size_t(b)][13 * 2 * w + 9], 0);
    int64_t outside = 0;
    for (int y = 0; y < 2 * h; ++y)
      for (int x = 0; x < 2 * w; ++x) {
        if (x == 9 && y == 13) continue;
        double lo = 255, hi = 0;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const int cx = std::clamp(x / 2 + dx, 0, w - 1), cy = std::clamp(y / 2 + dy, 0, h - 1);
            lo = std::min(lo, coarse_p.values[size_t(b)][size_t(cy) * w + cx]);
            hi = std::max(hi, coarse_p.values[size_t(b)][size_t(cy) * w + cx]);
          }
        const double v = fine_p.values[size_t(b)][size_t(y) * 2 * w + x];
        outside += v < lo - 1 || v > hi + 1;
      }
    EXPECT_EQ(outside, 0) << "band " << b + 1;
  }
  for (const auto& entry : fs::directory_iterator(dir.root())) {
    EXPECT_EQ(entry.path().string().find(".model-grid"), std::string::npos) << entry.path();
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
  }

  // Larger pixels than the model's, 3x: refused with resample as the fix; with it the view is
  // finer, the classes the most frequent of each pixel's, polygons from the class raster at the
  // raster's grid.
  o = options(dir, scene(dir, "coarse.tif", 30, 26, 32618, 3, GDT_Byte, 1.5), "coarse_out.tif");
  test::expectErrorContaining([&] { classify(o, progress); },
                              "(3 times larger): objects would not have the sizes it learned; set the option resample "
                              "(inference.resample, --resample, RESAMPLE) to classify it at the model's pixel size");
  o.resample = true;
  o.polygons = dir.path("coarse_polygons.gpkg");
  const ClassifyResult c = classify(o, progress);
  const Raster coarse_out = readAll(o.output);
  ASSERT_EQ(coarse_out.width, 30);
  ASSERT_EQ(coarse_out.height, 26);
  EXPECT_EQ(coarse_out.gt, (std::array<double, 6>{500000, 1.5, 0, 4500000, 0, -1.5}));
  std::fill(counted.begin(), counted.end(), 0);
  for (double v : coarse_out.values[0]) ++counted[size_t(v)];
  EXPECT_EQ(c.nodata_pixels, 0);
  for (size_t k = 0; k < c.classes.size(); ++k) EXPECT_EQ(c.class_pixels[k], counted[size_t(c.classes[k].id)]);
  EXPECT_GT(c.polygons, 0);

  // Within 1%: classified as it is, the same bytes as without resample.
  o = options(dir, scene(dir, "near.tif", 40, 40, 32618, 3, GDT_Byte, 0.502), "near_plain.tif");
  classify(o, progress);
  o.output = dir.path("near_resampled.tif");
  o.resample = true;
  classify(o, progress);
  EXPECT_EQ(readAll(dir.path("near_plain.tif")).values, readAll(dir.path("near_resampled.tif")).values);

  // What cannot be resampled: pixel sizes in degrees against metres, a model that does not
  // record its pixel size.
  o = options(dir, scene(dir, "degrees.tif", 40, 40, 4326, 3, GDT_Byte, 0.00001), "degrees_out.tif");
  o.resample = true;
  o.accept_mismatch = true;
  test::expectErrorContaining([&] { classify(o, progress); },
                              "pixel sizes in the two do not compare; reproject the raster (gdalwarp -t_srs)");
  EXPECT_FALSE(fs::exists(o.output));
  const LoadedModel trained = loadModelFile(test::trainedModel());
  ModelInfo unsized = trained.info;
  unsized.pixel_size_x = unsized.pixel_size_y = 0;
  saveModelFile(dir.path("unsized.pt"), unsized, *trained.model);
  o = options(dir, dir.path("fine.tif"), "unsized_out.tif");
  o.model_path = dir.path("unsized.pt");
  o.resample = true;
  test::expectErrorContaining([&] { classify(o, progress); },
                              "does not record the pixel size of its training data");
  EXPECT_FALSE(fs::exists(o.output));
}

// A job of many rasters with on_error: a damaged GeoTIFF (one whose header GDAL cannot read,
// one whose pixels are cut off) and a raster of other bands. stop (the default) refuses the
// job naming the first and the option; skip classifies the rest, exactly as alone, and
// names each raster skipped with why, writing nothing of it.
TEST(Classify, OnErrorSkipNamesTheRastersThatFailAndClassifiesTheRest) {
  TempDir dir;
  NullProgress progress;
  fs::create_directories(dir.path("in"));
  const std::string good = scene(dir, "in/a_good.tif", 60, 50);
  fs::copy_file(good, dir.path("in/b_header.tif"));
  fs::resize_file(dir.path("in/b_header.tif"), 16);  // the TIFF signature, no directory
  {
    // Uncompressed strips after the directory, cut at half: it opens, its pixels do not read.
    test::RasterSpec spec;
    spec.width = 60;
    spec.height = 50;
    spec.bands = 3;
    spec.geotransform = {500000, 0.5, 0, 4500000, 0, -0.5};
    spec.value = [](int x, int y, int b) { return test::sceneValue(x, y, b); };
    test::makeRaster(dir.path("in/c_cut.tif"), spec);
    fs::resize_file(dir.path("in/c_cut.tif"), fs::file_size(dir.path("in/c_cut.tif")) / 2);
  }
  scene(dir, "in/d_bands.tif", 60, 50, 32618, 4);
  ClassifyJob job;
  job.inputs = rastersOf(dir.path("in"));
  ASSERT_EQ(job.inputs.size(), 4u) << "a damaged GeoTIFF in a folder is listed, to be named";
  job.working_folder = dir.path("out");
  job.options = options(dir, "", "");
  job.options.output.clear();
  test::expectErrorContaining([&] { classifyRuns(job); }, "b_header.tif");
  test::expectErrorContaining(
      [&] { classifyRuns(job); },
      "(or set the option on_error (inference.on_error, --on-error) to skip, and name, the rasters that fail)");
  EXPECT_FALSE(fs::exists(dir.path("out")));

  job.options.on_error = "skip";
  const std::vector<ClassifyOptions> runs = classifyRuns(job);
  ASSERT_EQ(runs.size(), 4u);
  std::vector<ClassifyResult> results(runs.size());
  std::vector<size_t> order;
  classifyAll(runs, progress, [&](size_t i, const ClassifyResult& r) {
    order.push_back(i);
    results[i] = r;
  });
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_TRUE(results[0].skipped.empty()) << results[0].skipped;
  EXPECT_NE(results[1].skipped.find("b_header.tif"), std::string::npos) << results[1].skipped;
  EXPECT_NE(results[2].skipped.find("cannot read the raster"), std::string::npos) << results[2].skipped;
  EXPECT_NE(results[2].skipped.find("c_cut.tif"), std::string::npos) << results[2].skipped;
  EXPECT_NE(results[3].skipped.find("4 bands"), std::string::npos) << results[3].skipped;
  for (size_t i = 1; i < runs.size(); ++i) EXPECT_FALSE(fs::exists(runs[i].output)) << runs[i].output;
  ClassifyOptions alone = options(dir, good, "alone.tif");
  const ClassifyResult reference = classify(alone, progress);
  EXPECT_EQ(readAll(runs[0].output).values, readAll(alone.output).values);
  EXPECT_EQ(results[0].class_pixels, reference.class_pixels);
  for (const auto& entry : fs::directory_iterator(dir.path("out")))
    EXPECT_EQ(entry.path().filename().string().rfind("a_good_inference.tif", 0), 0u) << entry.path();
}

}  // namespace
}  // namespace geodl
