// The io writers read back with GDAL: GeoTIFFs (georeferencing, nodata, colours, categories,
// band names), polygons from a class raster, sample footprints; none leaves anything when
// not committed.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/errors.h"
#include "io/block_journal.h"
#include "io/footprints.h"
#include "io/gdal_util.h"
#include "io/geotiff_writer.h"
#include "io/gis_fixtures.h"
#include "io/polygonize.h"

namespace geodl {
namespace {

namespace fs = std::filesystem;

const char* kUtm18 =
    "PROJCS[\"WGS 84 / UTM zone 18N\",GEOGCS[\"WGS 84\",DATUM[\"WGS_1984\",SPHEROID[\"WGS 84\",6378137,298.257223563]],"
    "PRIMEM[\"Greenwich\",0],UNIT[\"degree\",0.0174532925199433]],PROJECTION[\"Transverse_Mercator\"],"
    "PARAMETER[\"latitude_of_origin\",0],PARAMETER[\"central_meridian\",-75],PARAMETER[\"scale_factor\",0.9996],"
    "PARAMETER[\"false_easting\",500000],PARAMETER[\"false_northing\",0],UNIT[\"metre\",1]]";

size_t entries(const std::string& folder) {
  return size_t(std::distance(fs::directory_iterator(folder), fs::directory_iterator()));
}

// A 20 x 10 class raster: class 1 in columns [2, 6), class 2 in [10, 18) (rows 2-7), 0 elsewhere.
io::GeoTiffSpec classSpec() {
  io::GeoTiffSpec spec;
  spec.width = 20;
  spec.height = 10;
  spec.geotransform = {500000, 2, 0, 4000000, 0, -2};
  spec.crs_wkt = kUtm18;
  spec.has_nodata = true;
  spec.nodata = 255;
  spec.colours = {"#000000", "#ff0000", "#00ff00"};
  spec.categories = {"background", "building", "water"};
  spec.band_names = {"class"};
  return spec;
}

std::vector<uint8_t> classPixels() {
  std::vector<uint8_t> v(200, 0);
  for (int r = 2; r < 8; ++r) {
    for (int c = 2; c < 6; ++c) v[size_t(r) * 20 + c] = 1;
    for (int c = 10; c < 18; ++c) v[size_t(r) * 20 + c] = 2;
  }
  v[0] = 255;  // one nodata pixel
  return v;
}

TEST(GeoTiffWriter, RowsBlocksAndMetadataReadBack) {
  test::TempDir dir;
  const std::string path = dir.path("classes.tif");
  const auto pixels = classPixels();
  {
    io::GeoTiffWriter w(path, classSpec());
    w.writeRows(0, 4, pixels.data());  // in two blocks of rows
    w.writeRows(4, 6, pixels.data() + 80);
    EXPECT_FALSE(fs::exists(path));
    w.commit();
  }
  io::Dataset ds = io::openRaster(path);
  EXPECT_EQ(ds->GetRasterXSize(), 20);
  EXPECT_EQ(ds->GetRasterYSize(), 10);
  double gt[6];
  ds->GetGeoTransform(gt);
  EXPECT_DOUBLE_EQ(gt[0], 500000);
  EXPECT_DOUBLE_EQ(gt[5], -2);
  EXPECT_NE(std::string(ds->GetSpatialRef()->GetName()).find("UTM zone 18N"), std::string::npos);
  GDALRasterBand* band = ds->GetRasterBand(1);
  int has_nodata = 0;
  EXPECT_DOUBLE_EQ(band->GetNoDataValue(&has_nodata), 255);
  EXPECT_TRUE(has_nodata);
  std::vector<uint8_t> back(200);
  ASSERT_EQ(band->RasterIO(GF_Read, 0, 0, 20, 10, back.data(), 20, 10, GDT_Byte, 0, 0, nullptr), CE_None);
  EXPECT_EQ(back, pixels);
  const GDALColorTable* colours = band->GetColorTable();
  ASSERT_NE(colours, nullptr);
  EXPECT_EQ(colours->GetColorEntry(1)->c1, 255);
  EXPECT_EQ(colours->GetColorEntry(2)->c2, 255);
  char** names = band->GetCategoryNames();
  ASSERT_NE(names, nullptr);
  EXPECT_STREQ(names[2], "water");
  EXPECT_STREQ(band->GetDescription(), "class");
}

TEST(GeoTiffWriter, Float32BandsAndNothingLeftWithoutCommit) {
  test::TempDir dir;
  io::GeoTiffSpec spec = classSpec();
  spec.bands = 2;
  spec.float32 = true;
  spec.has_nodata = false;
  spec.colours.clear();
  spec.categories.clear();
  spec.band_names = {"building", "water"};
  std::vector<float> values(2 * 200);
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i) / 400.0f;
  {
    io::GeoTiffWriter w(dir.path("p.tif"), spec);
    w.writeRows(0, 10, values.data());
    w.commit();
  }
  io::Dataset ds = io::openRaster(dir.path("p.tif"));
  ASSERT_EQ(ds->GetRasterCount(), 2);
  EXPECT_STREQ(ds->GetRasterBand(2)->GetDescription(), "water");
  float v = 0;
  ASSERT_EQ(ds->GetRasterBand(2)->RasterIO(GF_Read, 3, 1, 1, 1, &v, 1, 1, GDT_Float32, 0, 0, nullptr), CE_None);
  EXPECT_FLOAT_EQ(v, values[200 + 20 + 3]);
  {
    io::GeoTiffWriter w(dir.path("abandoned.tif"), spec);
    w.writeRows(0, 10, values.data());
  }
  EXPECT_FALSE(fs::exists(dir.path("abandoned.tif")));
  EXPECT_EQ(entries(dir.path("")), 1u);  // p.tif alone, no temporary
}

std::vector<char> fileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A raster of 600 x 500 pixels (three columns of tiles, the last one partial), in tiles of 64
// rows, as classify's blocks of rows give it: two blocks of whole tile rows, a block ending
// inside a tile row, and a last block starting inside one (the last window row, moved back to
// end at the raster's edge).
template <typename T>
void checkBlocksAppended(bool float32) {
  test::TempDir dir;
  io::GeoTiffSpec spec = classSpec();
  spec.width = 600;
  spec.height = 500;
  spec.bands = 3;
  spec.float32 = float32;
  spec.tile_rows = 64;
  spec.has_nodata = false;
  spec.colours.clear();
  spec.categories.clear();
  spec.band_names = {"a", "b", "c"};
  const int width = spec.width, height = spec.height;
  std::vector<T> values(size_t(spec.bands) * width * height);
  uint32_t noise = 12345;
  for (size_t i = 0; i < values.size(); ++i) {
    noise = noise * 1103515245u + 12345u;
    values[i] = T((i % width) / 37 + (i / width % height) / 23 + (noise >> 29));
  }
  // The rows [y, y + n) of every band.
  const auto rows = [&](int y, int n) {
    std::vector<T> part;
    for (int b = 0; b < spec.bands; ++b)
      part.insert(part.end(), values.begin() + (size_t(b) * height + y) * width,
                  values.begin() + (size_t(b) * height + y + n) * width);
    return part;
  };
  const std::vector<int> ys = {0, 128, 256, 376, 500};
  for (size_t k = 0; k + 1 < ys.size(); ++k) {
    io::GeoTiffWriter w(dir.path("block-" + std::to_string(k) + ".tif"), io::rowsSpec(spec, ys[k], ys[k + 1] - ys[k]));
    const auto part = rows(ys[k], ys[k + 1] - ys[k]);
    w.writeRows(0, ys[k + 1] - ys[k], part.data());
    w.commit();
  }
  {
    io::GeoTiffWriter w(dir.path("written.tif"), spec);
    for (int y = 0; y < height; y += 100) {  // rows as they come, across tiles
      const auto part = rows(y, 100);
      w.writeRows(y, 100, part.data());
    }
    w.commit();
  }
  {
    io::GeoTiffWriter w(dir.path("appended.tif"), spec);
    for (size_t k = 0; k + 1 < ys.size(); ++k)
      w.appendFile(dir.path("block-" + std::to_string(k) + ".tif"), ys[k], ys[k + 1] - ys[k]);
    w.commit();
  }
  // The tiles copied as they are and those decoded and compressed again make the same file.
  const auto written = fileBytes(dir.path("written.tif"));
  EXPECT_GT(written.size(), 10000u);
  EXPECT_EQ(fileBytes(dir.path("appended.tif")), written);
  io::Dataset ds = io::openRaster(dir.path("appended.tif"));
  std::vector<T> back(values.size());
  ASSERT_EQ(ds->RasterIO(GF_Read, 0, 0, width, height, back.data(), width, height, float32 ? GDT_Float32 : GDT_Byte,
                         spec.bands, nullptr, 0, 0, 0, nullptr),
            CE_None);
  EXPECT_EQ(back, values);
  int block_x = 0, block_y = 0;
  ds->GetRasterBand(1)->GetBlockSize(&block_x, &block_y);
  EXPECT_EQ(block_x, 256);
  EXPECT_EQ(block_y, 64);
  EXPECT_STREQ(ds->GetRasterBand(3)->GetDescription(), "c");
}

// Blocks of rows appended from their own files (a classification's journal) give the bytes of
// the rows written: the tiles that are the output's copied as they are, the others decoded.
TEST(GeoTiffWriter, AppendedBlocksGiveTheFileOfTheirRows) {
  checkBlocksAppended<uint8_t>(false);
  checkBlocksAppended<float>(true);
}

// The aligned tiles are copied, not compressed again: a block whose file GDAL compressed at
// another level keeps its own bytes in the output (the pixels are the same).
TEST(GeoTiffWriter, AlignedTilesAreCopiedAsTheyAre) {
  test::TempDir dir;
  io::GeoTiffSpec spec = classSpec();
  spec.width = spec.height = 256;
  spec.tile_rows = 128;
  spec.colours.clear();
  spec.categories.clear();
  std::vector<uint8_t> values(256 * 256);
  uint32_t noise = 7;
  for (size_t i = 0; i < values.size(); ++i) {
    noise = noise * 1103515245u + 12345u;
    values[i] = uint8_t(i % 256 / 50 + (noise >> 30));
  }
  io::initGdal();  // GDAL's drivers, before the test makes a file with GDAL alone
  {
    io::Dataset block(GetGDALDriverManager()->GetDriverByName("GTiff")->Create(
        dir.path("level1.tif").c_str(), 256, 128, 1, GDT_Byte,
        std::array<const char*, 7>{"TILED=YES", "BLOCKXSIZE=256", "BLOCKYSIZE=128", "COMPRESS=DEFLATE", "PREDICTOR=2",
                                   "ZLEVEL=1", nullptr}
            .data()));
    ASSERT_TRUE(block);
    ASSERT_EQ(block->GetRasterBand(1)->RasterIO(GF_Write, 0, 0, 256, 128, values.data(), 256, 128, GDT_Byte, 0, 0,
                                                nullptr),
              CE_None);
  }
  for (const char* name : {"written.tif", "appended.tif"}) {
    io::GeoTiffWriter w(dir.path(name), spec);
    if (std::string(name) == "written.tif")
      w.writeRows(0, 128, values.data());
    else
      w.appendFile(dir.path("level1.tif"), 0, 128);
    w.writeRows(128, 128, values.data() + 128 * 256);
    w.commit();
  }
  EXPECT_GT(fs::file_size(dir.path("appended.tif")), fs::file_size(dir.path("written.tif")));
  io::Dataset ds = io::openRaster(dir.path("appended.tif"));
  std::vector<uint8_t> back(values.size());
  ASSERT_EQ(ds->GetRasterBand(1)->RasterIO(GF_Read, 0, 0, 256, 256, back.data(), 256, 256, GDT_Byte, 0, 0, nullptr),
            CE_None);
  EXPECT_EQ(back, values);
}

// A block file that is not the block (another size, not a GeoTIFF, rows out of order) is
// refused naming it, as a raster that does not read; a file short of rows is not finished.
TEST(GeoTiffWriter, AppendRefusesWhatIsNotTheBlock) {
  test::TempDir dir;
  io::GeoTiffSpec spec = classSpec();
  spec.tile_rows = 16;
  const auto pixels = classPixels();
  {
    io::GeoTiffWriter w(dir.path("block.tif"), io::rowsSpec(spec, 0, 4));
    w.writeRows(0, 4, pixels.data());
    w.commit();
  }
  std::ofstream(dir.path("text.tif")) << "not a GeoTIFF";
  io::GeoTiffWriter w(dir.path("out.tif"), spec);
  try {
    w.appendFile(dir.path("block.tif"), 0, 5);
    FAIL() << "a block of 4 rows appended as 5";
  } catch (const RasterReadError& e) {
    EXPECT_NE(std::string(e.what()).find("'" + dir.path("block.tif") + "' has 4 rows, not the 5 of its block"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(w.appendFile(dir.path("text.tif"), 0, 4), RasterReadError);
  EXPECT_THROW(w.appendFile(dir.path("block.tif"), 4, 4), Error);  // rows 0-3 come first
  w.appendFile(dir.path("block.tif"), 0, 4);
  EXPECT_THROW(w.finish(), Error);  // rows 4-9 are missing
}

TEST(Polygonize, ClassesBecomePolygonsWithNamesAndAreasAndSmallOnesGo) {
  test::TempDir dir;
  const std::string raster = dir.path("classes.tif");
  {
    io::GeoTiffWriter w(raster, classSpec());
    w.writeRows(0, 10, classPixels().data());
    w.commit();
  }
  const auto names = classSpec().categories;
  const auto all = io::polygonizeClasses(raster, dir.path("all.gpkg"), names, 0);
  EXPECT_EQ(all.polygons, 3);  // the background, the building, the water (nodata left out)
  io::Dataset ds = io::openVector(dir.path("all.gpkg"));
  OGRLayer* layer = ds->GetLayerByName("classes");
  ASSERT_NE(layer, nullptr);
  double water_area = 0;
  for (auto& f : *layer)
    if (std::string(f->GetFieldAsString("class_name")) == "water") {
      EXPECT_EQ(f->GetFieldAsInteger("class_id"), 2);
      water_area = f->GetFieldAsDouble("area");
    }
  EXPECT_DOUBLE_EQ(water_area, 8 * 6 * 4.0);  // 8 x 6 pixels of 2 x 2 m
  // The building (4 x 6 pixels, 96 m²) is under 100 m²: dropped.
  const auto big = io::polygonizeClasses(raster, dir.path("big.gpkg"), names, 100);
  EXPECT_EQ(big.polygons, 2);
  EXPECT_EQ(big.dropped, 1);
}

TEST(FootprintWriter, OnePolygonPerSampleWithItsSplitAndCounts) {
  test::TempDir dir;
  const std::array<double, 6> gt = {500000, 2, 0, 4000000, 0, -2};
  {
    io::FootprintWriter w(dir.path("footprints.gpkg"), kUtm18, {0, 1});
    w.add("trn", 0, "a.tif", {0, 0, 8, 8}, gt, {60, 4});
    w.add("val", 0, "a.tif", {8, 0, 8, 8}, {500016, 2, 0, 4000000, 0, -2}, {64, 0});
    w.commit();
  }
  io::Dataset ds = io::openVector(dir.path("footprints.gpkg"));
  OGRLayer* layer = ds->GetLayerByName("samples");
  ASSERT_NE(layer, nullptr);
  EXPECT_EQ(layer->GetFeatureCount(), 2);
  layer->ResetReading();
  std::unique_ptr<OGRFeature> first(layer->GetNextFeature());
  EXPECT_STREQ(first->GetFieldAsString("split"), "trn");
  EXPECT_EQ(first->GetFieldAsInteger("class_1"), 4);
  OGREnvelope e;
  first->GetGeometryRef()->getEnvelope(&e);
  EXPECT_DOUBLE_EQ(e.MinX, 500000);
  EXPECT_DOUBLE_EQ(e.MaxX, 500016);
  {
    io::FootprintWriter w(dir.path("abandoned.gpkg"), kUtm18, {0, 1});
    w.add("trn", 0, "a.tif", {0, 0, 8, 8}, gt, {60, 4});
  }
  EXPECT_FALSE(fs::exists(dir.path("abandoned.gpkg")));
}

}  // namespace
}  // namespace geodl
