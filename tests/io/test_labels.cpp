// Rasterizing ground truth on a raster's exact grid.
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>

#include "base/errors.h"
#include "io/gis_fixtures.h"
#include "io/labels.h"
#include "io/raster.h"

namespace geodl {
namespace {

using test::box;
using test::makeRaster;
using test::makeVector;

// 20 x 10 pixels of 1 m, upper-left corner at (1000, 2000), UTM 18N.
std::string raster(const test::TempDir& dir) {
  return makeRaster(dir.path("r.tif"), test::RasterSpec{});
}

std::vector<uint8_t> rasterizeAll(const io::LabelSource& source, const std::string& raster_path) {
  io::RasterReader reader(raster_path);
  io::LabelRasterizer labels(source, reader.info(), 255);
  std::vector<uint8_t> out;
  labels.rasterize(0, 0, reader.info().width, reader.info().height, out);
  return out;
}

// Pixels (col, row) whose label is `value`.
std::vector<std::pair<int, int>> pixelsOf(const std::vector<uint8_t>& labels, int width, uint8_t value) {
  std::vector<std::pair<int, int>> out;
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i] == value) out.emplace_back(int(i % width), int(i / width));
  return out;
}

std::vector<std::pair<int, int>> block(int c0, int r0, int c1, int r1) {
  std::vector<std::pair<int, int>> out;
  for (int r = r0; r < r1; ++r)
    for (int c = c0; c < c1; ++c) out.emplace_back(c, r);
  return out;
}

TEST(Labels, AKnownPolygonRasterizesToKnownPixels) {
  test::TempDir dir;
  // Columns 2..4 and rows 3..5: x 1002-1005, y 1994-1997.
  const auto v = makeVector(dir.path("v.gpkg"), 32618, "class", OFTInteger,
                            {{box(1002, 1994, 1005, 1997), "3"}});
  const auto labels = rasterizeAll({v, "", "class", {}}, raster(dir));
  EXPECT_EQ(pixelsOf(labels, 20, 3), block(2, 3, 5, 6));
  EXPECT_EQ(pixelsOf(labels, 20, 0).size(), 200u - 9u);
}

TEST(Labels, AVectorInAnotherCrsIsReprojectedOntoTheSamePixels) {
  test::TempDir dir;
  // The same square in geographic coordinates (EPSG:4326), and in UTM 17N.
  const auto geographic = makeVector(dir.path("g.gpkg"), 4326, "class", OFTInteger,
                                     {{test::boxIn(32618, 4326, 1002, 1994, 1005, 1997), "3"}});
  const auto utm17 = makeVector(dir.path("u.gpkg"), 32617, "class", OFTInteger,
                                {{test::boxIn(32618, 32617, 1002, 1994, 1005, 1997), "3"}});
  for (const auto& v : {geographic, utm17}) {
    const auto labels = rasterizeAll({v, "", "class", {}}, raster(dir));
    EXPECT_EQ(pixelsOf(labels, 20, 3), block(2, 3, 5, 6)) << v;
  }
}

TEST(Labels, WindowsOfTheGridRasterizeLikeTheWhole) {
  test::TempDir dir;
  const auto v = makeVector(dir.path("v.gpkg"), 32618, "class", OFTInteger,
                            {{box(1002, 1994, 1015, 1999), "1"}});
  const auto r = raster(dir);
  const auto whole = rasterizeAll({v, "", "class", {}}, r);
  io::RasterReader reader(r);
  io::LabelRasterizer labels({v, "", "class", {}}, reader.info(), 255);
  std::vector<uint8_t> window;
  labels.rasterize(5, 2, 8, 6, window);
  for (int row = 0; row < 6; ++row)
    for (int col = 0; col < 8; ++col)
      EXPECT_EQ(window[size_t(row) * 8 + col], whole[size_t(row + 2) * 20 + col + 5]);
  // Outside the raster: nothing burned beyond the polygons.
  labels.rasterize(-4, -4, 4, 4, window);
  for (auto value : window) EXPECT_EQ(value, 0);
}

TEST(Labels, StringClassesMapInSortedOrderFromOne) {
  test::TempDir dir;
  const auto v = makeVector(dir.path("v.gpkg"), 32618, "kind", OFTString,
                            {{box(1000, 1999, 1001, 2000), "water"},
                             {box(1001, 1999, 1002, 2000), "building"},
                             {box(1002, 1999, 1003, 2000), "road"}});
  io::RasterReader reader(raster(dir));
  io::LabelRasterizer labels({v, "", "kind", {}}, reader.info(), 255);
  const auto& classes = labels.classes();
  EXPECT_TRUE(classes.string_values);
  EXPECT_EQ(classes.ids, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(classes.names, (std::vector<std::string>{"background", "building", "road", "water"}));
  std::vector<uint8_t> out;
  labels.rasterize(0, 0, 3, 1, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{3, 1, 2}));
}

TEST(Labels, IgnoredValuesBecomeTheIgnoreIndex) {
  test::TempDir dir;
  const auto v = makeVector(dir.path("v.gpkg"), 32618, "class", OFTInteger,
                            {{box(1000, 1999, 1001, 2000), "1"}, {box(1001, 1999, 1002, 2000), "7"}});
  const auto labels = rasterizeAll({v, "", "class", {"7"}}, raster(dir));
  EXPECT_EQ(labels[0], 1);
  EXPECT_EQ(labels[1], 255);
}

TEST(Labels, OverlapsGoToTheHigherClassWhateverTheFeatureOrder) {
  test::TempDir dir;
  for (bool reversed : {false, true}) {
    std::vector<test::Polygon> polygons = {{box(1000, 1990, 1010, 2000), "4"},
                                           {box(1005, 1990, 1015, 2000), "2"}};
    if (reversed) std::swap(polygons[0], polygons[1]);
    const auto v = makeVector(dir.path(reversed ? "b.gpkg" : "a.gpkg"), 32618, "class",
                              OFTInteger, polygons);
    const auto labels = rasterizeAll({v, "", "class", {}}, raster(dir));
    EXPECT_EQ(labels[7], 4) << "overlap column 7, reversed " << reversed;
    EXPECT_EQ(labels[12], 2);
    EXPECT_EQ(labels[2], 4);
  }
}

void expectError(const std::function<void()>& f, const std::string& part) {
  test::expectErrorContaining(f, part);
}

TEST(Labels, BadGroundTruthGivesClearErrors) {
  test::TempDir dir;
  const auto r = raster(dir);
  io::RasterReader reader(r);
  const auto good = makeVector(dir.path("v.gpkg"), 32618, "class", OFTInteger,
                               {{box(1002, 1994, 1005, 1997), "3"}});
  expectError([&] { io::LabelRasterizer({good, "", "klass", {}}, reader.info(), 255); },
              "has no field 'klass'; its fields: class");
  const auto empty = makeVector(dir.path("e.gpkg"), 32618, "class", OFTInteger, {});
  expectError([&] { io::LabelRasterizer({empty, "", "class", {}}, reader.info(), 255); },
              "has no polygon");
  const auto line = makeVector(dir.path("l.gpkg"), 32618, "class", OFTInteger,
                               {{"LINESTRING (1000 1990, 1010 1995)", "1"}});
  expectError([&] { io::LabelRasterizer({line, "", "class", {}}, reader.info(), 255); },
              "must be polygons");
  const auto far = makeVector(dir.path("f.gpkg"), 32618, "class", OFTInteger,
                              {{box(5000, 5000, 5010, 5010), "1"}});
  expectError([&] { io::LabelRasterizer({far, "", "class", {}}, reader.info(), 255); },
              "do not overlap: in the raster's CRS the polygons cover (5000, 5000) - (5010, 5010) "
              "and the raster (1000, 1990) - (1020, 2000)");
  test::RasterSpec spec;
  spec.epsg = 0;
  io::RasterReader bare(makeRaster(dir.path("bare.tif"), spec));
  expectError([&] { io::LabelRasterizer({good, "", "class", {}}, bare.info(), 255); },
              "has no CRS");
  // A shapefile without its .prj has no CRS.
  const auto shp = makeVector(dir.path("nocrs.shp"), 0, "class", OFTInteger,
                              {{box(1002, 1994, 1005, 1997), "3"}});
  expectError([&] { io::LabelRasterizer({shp, "", "class", {}}, reader.info(), 255); },
              "has no CRS; assign one");
  expectError([&] { io::LabelRasterizer({dir.path("missing.gpkg"), "", "class", {}}, reader.info(), 255); },
              "cannot open the vector file");
  const auto big = makeVector(dir.path("big.gpkg"), 32618, "class", OFTInteger,
                              {{box(1002, 1994, 1005, 1997), "300"}});
  expectError([&] { io::LabelRasterizer({big, "", "class", {}}, reader.info(), 255); },
              "has class 300");
}

// Labels are one byte: the string classes, numbered from 1, must stop below the ignore
// index (255, or the one given) and at 254.
TEST(Labels, MoreStringClassesThanOneByteHoldsBesideTheIgnoreIndexAreRefused) {
  test::TempDir dir;
  io::RasterReader reader(makeRaster(dir.path("r.tif"), test::RasterSpec{300, 1}));
  std::vector<test::Polygon> polygons;
  for (int i = 0; i < 255; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "c%03d", i);
    polygons.push_back({box(1000 + i, 1999, 1001 + i, 2000), name});
  }
  const auto v255 = makeVector(dir.path("v255.gpkg"), 32618, "kind", OFTString, polygons);
  test::expectErrorContaining([&] { io::LabelRasterizer({v255, "", "kind", {}}, reader.info(), 255); },
                              "has 255 string classes, numbered from 1, but only 254 fit");
  polygons.pop_back();  // 254: ids 1..254, the last one below 255
  const auto v254 = makeVector(dir.path("v254.gpkg"), 32618, "kind", OFTString, polygons);
  io::LabelRasterizer fits({v254, "", "kind", {}}, reader.info(), 255);
  EXPECT_EQ(fits.classes().ids.back(), 254);
  // With ignore index 100, 99 classes fit.
  test::expectErrorContaining([&] { io::LabelRasterizer({v254, "", "kind", {}}, reader.info(), 100); },
                              "but only 99 fit beside the background (0) and the ignore index (100)");
  EXPECT_NO_THROW(io::checkStringClassCount(99, 100));
  EXPECT_THROW(io::checkStringClassCount(100, 100), InputError);
}

TEST(Labels, FractionalClassIdsAreRefusedAndWholeRealsAccepted) {
  test::TempDir dir;
  io::RasterReader reader(raster(dir));
  const auto whole = makeVector(dir.path("w.gpkg"), 32618, "class", OFTReal,
                                {{box(1000, 1999, 1001, 2000), "2.0"}, {box(1001, 1999, 1002, 2000), "3"}});
  io::LabelRasterizer ok({whole, "", "class", {}}, reader.info(), 255);
  EXPECT_EQ(ok.classes().ids, (std::vector<int>{0, 2, 3}));
  const auto fractional = makeVector(dir.path("f.gpkg"), 32618, "class", OFTReal,
                                     {{box(1000, 1999, 1001, 2000), "2"}, {box(1001, 1999, 1002, 2000), "2.7"}});
  test::expectErrorContaining([&] { io::LabelRasterizer({fractional, "", "class", {}}, reader.info(), 255); },
                              "has class 2.7 in field 'class': class ids are whole numbers");
}

TEST(Labels, FeaturesWithoutAClassAreLeftOutWithAWarning) {
  test::TempDir dir;
  io::RasterReader reader(raster(dir));
  const auto v = makeVector(dir.path("v.gpkg"), 32618, "kind", OFTString,
                            {{box(1000, 1999, 1001, 2000), "water"},
                             {box(1001, 1999, 1002, 2000), test::kNull},
                             {box(1002, 1999, 1003, 2000), test::kNull},
                             {box(1003, 1999, 1004, 2000), "road"}});
  io::LabelRasterizer labels({v, "", "kind", {}}, reader.info(), 255);
  ASSERT_EQ(labels.warnings().size(), 1u);
  EXPECT_NE(labels.warnings()[0].find("2 features of '" + v + "' (the first: feature 2) have no class in field 'kind'"),
            std::string::npos)
      << labels.warnings()[0];
  // The others keep their sorted numbering; the null ones are not burned.
  EXPECT_EQ(labels.classes().names, (std::vector<std::string>{"background", "road", "water"}));
  std::vector<uint8_t> out;
  labels.rasterize(0, 0, 4, 1, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{2, 0, 0, 1}));
  // A layer with every class given says nothing.
  const auto full = makeVector(dir.path("full.gpkg"), 32618, "kind", OFTString, {{box(1000, 1999, 1001, 2000), "water"}});
  EXPECT_TRUE(io::LabelRasterizer({full, "", "kind", {}}, reader.info(), 255).warnings().empty());
}

TEST(Raster, WindowsReachingOutsideArePaddedAndNodataIsInvalid) {
  test::TempDir dir;
  test::RasterSpec spec;
  spec.bands = 2;
  spec.type = GDT_UInt16;
  spec.nodata = 0;
  spec.value = [](int c, int r, int b) { return c < 3 ? 0.0 : 100.0 * (b + 1) + c + r; };
  io::RasterReader reader(makeRaster(dir.path("n.tif"), spec));
  EXPECT_EQ(reader.info().data_type, "UInt16");
  std::vector<double> values;
  std::vector<uint8_t> valid;
  reader.read(18, 8, 4, 4, values, valid);  // 2 x 2 inside, the rest outside
  EXPECT_EQ(valid[0], 1);
  EXPECT_EQ(values[0], 100 + 18 + 8);
  EXPECT_EQ(values[1], 200 + 18 + 8);
  EXPECT_EQ(valid[2], 0);   // column 20: outside
  EXPECT_EQ(values[2 * 2], 0);
  EXPECT_EQ(valid[2 * 4], 0);  // row 10: outside
  reader.read(0, 0, 4, 1, values, valid);
  EXPECT_EQ(valid, (std::vector<uint8_t>{0, 0, 0, 1}));  // columns 0-2 are nodata
}

}  // namespace
}  // namespace geodl

namespace geodl {
namespace {

// The bands' wavelengths from their metadata: GDAL 3.10's CENTRAL_WAVELENGTH_UM (IMAGERY
// domain), the Sentinel-2 driver's WAVELENGTH in nm, ENVI's wavelength without unit (over 100:
// nanometres); none unless every band has one.
TEST(RasterReader, BandWavelengthsFromTheirMetadata) {
  test::TempDir dir;
  test::RasterSpec spec;
  spec.bands = 3;
  const std::string path = makeRaster(dir.path("w.tif"), spec);
  const auto set = [&](const std::function<void(GDALDataset&)>& f) {
    GDALDataset* ds = GDALDataset::Open(path.c_str(), GDAL_OF_RASTER | GDAL_OF_UPDATE);
    ASSERT_NE(ds, nullptr);
    f(*ds);
    GDALClose(ds);
  };
  set([](GDALDataset& ds) {
    ds.GetRasterBand(1)->SetMetadataItem("CENTRAL_WAVELENGTH_UM", "0.665", "IMAGERY");
    ds.GetRasterBand(2)->SetMetadataItem("WAVELENGTH", "560");
    ds.GetRasterBand(2)->SetMetadataItem("WAVELENGTH_UNIT", "nm");
  });
  EXPECT_TRUE(io::RasterReader(path).info().wavelengths.empty()) << "band 3 has none";
  set([](GDALDataset& ds) { ds.GetRasterBand(3)->SetMetadataItem("wavelength", "490.0"); });
  const auto w = io::RasterReader(path).info().wavelengths;
  ASSERT_EQ(w.size(), 3u);
  EXPECT_DOUBLE_EQ(w[0], 0.665);
  EXPECT_DOUBLE_EQ(w[1], 0.56);
  EXPECT_DOUBLE_EQ(w[2], 0.49);
  set([](GDALDataset& ds) {
    ds.GetRasterBand(3)->SetMetadataItem("wavelength", "0.842");
    ds.GetRasterBand(3)->SetMetadataItem("wavelength_units", "Micrometers");
    ds.GetRasterBand(2)->SetMetadataItem("WAVELENGTH_UNIT", "furlongs");  // unknown: not read
  });
  EXPECT_TRUE(io::RasterReader(path).info().wavelengths.empty());
}

}  // namespace
}  // namespace geodl
