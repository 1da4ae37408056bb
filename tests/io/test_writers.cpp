// The io writers read back with GDAL: GeoTIFFs (georeferencing, nodata, colours, categories,
// band names), polygons from a class raster, sample footprints; none leaves anything when
// not committed.
#include <gtest/gtest.h>

#include <filesystem>

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

// A scratch file (a GeoTIFF output's journal, read back only by GeoDL) holds the same pixels,
// compressed at DEFLATE level 1 instead of 6: faster to write, larger.
TEST(GeoTiffWriter, ScratchFilesHoldTheSamePixelsLessCompressed) {
  test::TempDir dir;
  io::GeoTiffSpec spec = classSpec();
  spec.width = spec.height = 512;
  spec.bands = 3;
  spec.has_nodata = false;
  spec.colours.clear();
  spec.categories.clear();
  spec.band_names.clear();
  // Probabilities as a model gives them: even within objects, noisy at their borders.
  std::vector<uint8_t> values(size_t(spec.bands) * 512 * 512);
  uint32_t noise = 12345;
  for (size_t i = 0; i < values.size(); ++i) {
    noise = noise * 1103515245u + 12345u;
    const size_t x = i % 512, y = i / 512 % 512, band = i / (512 * 512);
    const size_t object = (x / 24 + y / 40 + band) % 3;
    values[i] = uint8_t(object * 100 + ((x % 24 < 4 || y % 40 < 4) ? noise >> 30 : 0));
  }
  std::vector<std::vector<uint8_t>> read;
  for (bool scratch : {false, true}) {
    spec.scratch = scratch;
    const std::string path = dir.path(scratch ? "scratch.tif" : "output.tif");
    {
      io::GeoTiffWriter w(path, spec);
      w.writeRows(0, 512, values.data());
      w.commit();
    }
    io::Dataset ds = io::openRaster(path);
    read.emplace_back(values.size());
    ASSERT_EQ(ds->RasterIO(GF_Read, 0, 0, 512, 512, read.back().data(), 512, 512, GDT_Byte, 3, nullptr, 0, 0, 0,
                           nullptr),
              CE_None);
  }
  EXPECT_EQ(read[0], values);
  EXPECT_EQ(read[1], values);
  EXPECT_GT(fs::file_size(dir.path("scratch.tif")), fs::file_size(dir.path("output.tif")) * 21 / 20);
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
