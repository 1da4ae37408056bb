// Outputs written in parts (io/parts_vrt.h): the VRT over the parts reads back as the whole
// raster with its styling, the parts move into place and replace the previous ones, nothing
// is left without commit, and a parts folder GeoDL did not write is refused.
#include <gtest/gtest.h>


#include <algorithm>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "base/atomic_file.h"
#include "base/file_kind.h"
#include "io/gdal_util.h"
#include "io/geotiff_writer.h"
#include "io/gis_fixtures.h"
#include "io/block_journal.h"
#include "io/parts_vrt.h"
#include "io/polygonize.h"
#include "io/raster.h"

namespace geodl {
namespace {

namespace fs = std::filesystem;

// A 30 x 20 class raster, nodata 255, with colours and categories; its value at (c, r).
io::GeoTiffSpec spec30x20() {
  io::GeoTiffSpec spec;
  spec.width = 30;
  spec.height = 20;
  spec.geotransform = {500000, 2, 0, 4000000, 0, -2};
  OGRSpatialReference utm;
  utm.importFromEPSG(32618);
  char* wkt = nullptr;
  utm.exportToWkt(&wkt);
  spec.crs_wkt = wkt;
  CPLFree(wkt);
  spec.has_nodata = true;
  spec.nodata = 255;
  spec.colours = {"#000000", "", "#00ff00"};  // class 1 without a colour
  spec.categories = {"background", "building & roof", "water"};
  spec.band_names = {"class"};
  return spec;
}
uint8_t value(int c, int r) { return r == 0 && c == 0 ? 255 : uint8_t((c / 7 + r / 5) % 3); }

// Rows [y0, y0 + rows) of spec30x20 as a part at `path` (a GeoTIFF of those rows alone).
void writePart(const std::string& path, int y0, int rows) {
  io::GeoTiffSpec part = spec30x20();
  part.geotransform[3] += y0 * part.geotransform[5];
  part.height = rows;
  std::vector<uint8_t> pixels;
  for (int r = y0; r < y0 + rows; ++r)
    for (int c = 0; c < part.width; ++c) pixels.push_back(value(c, r));
  io::GeoTiffWriter w(path, part);
  w.writeRows(0, rows, pixels.data());
  w.commit();
}

std::vector<uint8_t> readAll(const std::string& path) {
  io::Dataset ds = io::openRaster(path);
  std::vector<uint8_t> back(size_t(ds->GetRasterXSize()) * ds->GetRasterYSize());
  EXPECT_EQ(ds->GetRasterBand(1)->RasterIO(GF_Read, 0, 0, ds->GetRasterXSize(), ds->GetRasterYSize(), back.data(),
                                           ds->GetRasterXSize(), ds->GetRasterYSize(), GDT_Byte, 0, 0, nullptr),
            CE_None);
  return back;
}

std::vector<uint8_t> expected() {
  std::vector<uint8_t> v;
  for (int r = 0; r < 20; ++r)
    for (int c = 0; c < 30; ++c) v.push_back(value(c, r));
  return v;
}

TEST(PartsVrt, NamesAndTheRasterItDescribesReadBackWhole) {
  EXPECT_TRUE(io::isVrtPath("/a/b.VRT"));
  EXPECT_FALSE(io::isVrtPath("/a/b.tif"));
  EXPECT_EQ(io::partsFolderOf("/a/classes.vrt"), "/a/classes_parts");
  EXPECT_EQ(io::blockFileName(12), "block-000012.tif");

  test::TempDir dir;
  fs::create_directories(dir.path("c_parts"));
  writePart(dir.path("c_parts/part-0.tif"), 0, 7);
  writePart(dir.path("c_parts/part-1.tif"), 7, 13);
  const std::string vrt = dir.path("c.vrt");
  const std::string xml = io::partsVrtXml(
      vrt, {{dir.path("c_parts/part-0.tif"), 0, 7}, {dir.path("c_parts/part-1.tif"), 7, 13}}, spec30x20());
  EXPECT_NE(xml.find("relativeToVRT=\"1\">c_parts/part-1.tif<"), std::string::npos) << xml;
  EXPECT_NE(xml.find("building &amp; roof"), std::string::npos);
  std::ofstream(vrt) << xml;
  EXPECT_EQ(fileKind(vrt), FileKind::Vrt);
  EXPECT_TRUE(io::writtenByGeoDL(vrt));
  EXPECT_EQ(readAll(vrt), expected());

  io::Dataset ds = io::openRaster(vrt);
  double gt[6];
  ds->GetGeoTransform(gt);
  EXPECT_DOUBLE_EQ(gt[0], 500000);
  EXPECT_DOUBLE_EQ(gt[3], 4000000);
  EXPECT_DOUBLE_EQ(gt[5], -2);
  OGRSpatialReference utm;
  utm.importFromEPSG(32618);
  ASSERT_NE(ds->GetSpatialRef(), nullptr);
  EXPECT_TRUE(ds->GetSpatialRef()->IsSame(&utm));
  GDALRasterBand* band = ds->GetRasterBand(1);
  int has_nodata = 0;
  EXPECT_DOUBLE_EQ(band->GetNoDataValue(&has_nodata), 255);
  EXPECT_TRUE(has_nodata);
  ASSERT_NE(band->GetColorTable(), nullptr);
  EXPECT_EQ(band->GetColorTable()->GetColorEntryCount(), 3);
  EXPECT_EQ(band->GetColorTable()->GetColorEntry(1)->c4, 0);  // no colour given
  EXPECT_EQ(band->GetColorTable()->GetColorEntry(2)->c2, 255);
  char** names = band->GetCategoryNames();
  ASSERT_NE(names, nullptr);
  EXPECT_STREQ(names[1], "building & roof");
  EXPECT_STREQ(band->GetDescription(), "class");

  // A part outside the VRT's folder is named by its absolute path; rows no part holds are nodata.
  test::TempDir other;
  writePart(other.path("far.tif"), 7, 13);
  const std::string far = dir.path("far.vrt");
  std::ofstream(far) << io::partsVrtXml(far, {{other.path("far.tif"), 7, 13}}, spec30x20());
  const auto back = readAll(far);
  EXPECT_EQ(back[0], 255);
  EXPECT_EQ(back[29 + 6 * 30], 255);
  const auto whole = expected();
  EXPECT_EQ(std::vector<uint8_t>(back.begin() + 7 * 30, back.end()),
            std::vector<uint8_t>(whole.begin() + 7 * 30, whole.end()));
}

TEST(PartsVrt, CommitMovesThePartsInAndReplacesThePreviousOutput) {
  test::TempDir dir;
  const std::string vrt = dir.path("c.vrt");
  const std::string staging = io::journalFolderOf(vrt);
  EXPECT_EQ(fs::path(staging).filename().string(), ".c.vrt.partial");
  for (int run = 0; run < 2; ++run) {
    fs::create_directories(staging);
    io::PartsOutput out(vrt, spec30x20(), staging);
    // The second run has three parts where the first had two: none of the first's stays.
    const std::vector<int> cuts = run == 0 ? std::vector<int>{0, 7, 20} : std::vector<int>{0, 5, 12, 20};
    std::vector<io::VrtPart> parts;
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      const std::string path = (fs::path(staging) / io::blockFileName(int(k))).string();
      writePart(path, cuts[k], cuts[k + 1] - cuts[k]);
      parts.push_back({path, cuts[k], cuts[k + 1] - cuts[k]});
    }
    {
      const io::MemoryVrt view(parts, spec30x20());
      EXPECT_EQ(readAll(view.path()), expected());
    }
    out.commit(parts);
    EXPECT_FALSE(fs::exists(staging));
    EXPECT_EQ(readAll(vrt), expected());
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path("c_parts"))) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"block-000000.tif", "block-000000.tif.aux.xml", "block-000001.tif",
                                             "block-000001.tif.aux.xml", "block-000002.tif",
                                             "block-000002.tif.aux.xml"}));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.root()), fs::directory_iterator()), 2);  // c.vrt, c_parts

  // Without commit the staging folder (the run's journal: a stopped run resumes from it)
  // stays as it was, and so does the output.
  fs::create_directories(staging);
  {
    io::PartsOutput out(vrt, spec30x20(), staging);
    writePart((fs::path(staging) / io::blockFileName(0)).string(), 0, 20);
  }
  EXPECT_TRUE(fs::is_regular_file(fs::path(staging) / io::blockFileName(0)));
  EXPECT_EQ(readAll(vrt), expected());

  // A part missing at commit (a rank did not write it) is named, and nothing moves.
  {
    io::PartsOutput out(vrt, spec30x20(), staging);
    test::expectErrorContaining(
        [&] { out.commit({{(fs::path(staging) / io::blockFileName(1)).string(), 0, 20}}); }, "is missing");
  }
  EXPECT_TRUE(fs::is_directory(staging));
  EXPECT_EQ(readAll(vrt), expected());
}

TEST(PartsVrt, APartsFolderGeoDLDidNotWriteIsRefused) {
  test::TempDir dir;
  const std::string vrt = dir.path("c.vrt");
  io::checkReplaceableParts(vrt, "the class raster");  // none yet
  fs::create_directories(dir.path("c_parts"));
  std::ofstream(dir.path("c_parts/part-0.tif")) << "x";
  std::ofstream(dir.path("c_parts/part-0.tif.aux.xml")) << "x";
  std::ofstream(dir.path("c_parts/block-000003.tif")) << "x";  // parts of older GeoDLs and today's
  io::checkReplaceableParts(vrt, "the class raster");
  std::ofstream(dir.path("c_parts/notes.txt")) << "mine";
  test::expectErrorContaining([&] { io::checkReplaceableParts(vrt, "the class raster"); },
                              "which holds 'notes.txt', a file GeoDL did not write there; move it away");
  fs::remove_all(dir.path("c_parts"));
  std::ofstream(dir.path("c_parts")) << "a file";
  test::expectErrorContaining([&] { io::checkReplaceableParts(vrt, "the class raster"); },
                              "which is a file, not GeoDL's folder of parts");
}

// A 40 x 30 class raster cut into parts of rows [0, 10), [10, 12) and [12, 30): a bar across
// all three parts, a U whose arms meet only in the last part, a ring whose hole spans the thin
// middle part, two blocks of one class that touch across a border at a corner only, and
// different classes side by side across a border.
uint8_t shapes(int c, int r) {
  if (r == 0 && c == 0) return 255;
  if (c >= 2 && c <= 4 && r >= 3 && r <= 25) return 1;                                   // bar
  if (r >= 5 && r <= 20 && ((c >= 8 && c <= 9) || (c >= 14 && c <= 15))) return 2;     // U arms
  if (r >= 18 && r <= 20 && c >= 8 && c <= 15) return 2;                                 // U base
  if (r >= 7 && r <= 9 && c >= 20 && c <= 22) return 3;                                  // corner only
  if (r >= 10 && r <= 11 && c >= 23 && c <= 25) return 3;
  if (r >= 5 && r <= 16 && c >= 28 && c <= 36 && !(r >= 8 && r <= 13 && c >= 31 && c <= 33)) return 4;  // ring
  if (r >= 8 && r <= 11 && c >= 38) return 1;                                            // side by side
  if (r >= 12 && r <= 14 && c >= 38) return 2;
  return 0;
}

void writeRows(const std::string& path, int y0, int rows) {
  io::GeoTiffSpec spec = spec30x20();
  spec.width = 40;
  spec.height = rows;
  spec.geotransform[3] += y0 * spec.geotransform[5];
  std::vector<uint8_t> pixels;
  for (int r = y0; r < y0 + rows; ++r)
    for (int c = 0; c < 40; ++c) pixels.push_back(shapes(c, r));
  io::GeoTiffWriter w(path, spec);
  w.writeRows(0, rows, pixels.data());
  w.commit();
}

struct Shape {
  int cls;
  double area;
  std::unique_ptr<OGRGeometry> geometry;
};
std::vector<Shape> readPolygons(const std::string& gpkg) {
  io::Dataset ds(GDALDataset::Open(gpkg.c_str(), GDAL_OF_VECTOR));
  std::vector<Shape> out;
  for (auto& f : *ds->GetLayer(0))
    out.push_back({f->GetFieldAsInteger("class_id"), f->GetFieldAsDouble("area"),
                   std::unique_ptr<OGRGeometry>(f->GetGeometryRef()->clone())});
  std::sort(out.begin(), out.end(), [](const Shape& a, const Shape& b) {
    OGRPoint ca, cb;
    a.geometry->Centroid(&ca);
    b.geometry->Centroid(&cb);
    return std::make_tuple(a.cls, a.area, ca.getX(), ca.getY()) < std::make_tuple(b.cls, b.area, cb.getX(), cb.getY());
  });
  return out;
}

TEST(PartsVrt, PolygonsOfThePartsMergedAlongTheirBordersAreTheWholeRastersPolygons) {
  test::TempDir dir;
  writeRows(dir.path("whole.tif"), 0, 30);
  const std::vector<std::string> names = {"background", "bar", "u", "corner", "ring"};
  io::polygonizeClasses(dir.path("whole.tif"), dir.path("whole.gpkg"), names, 0.0);
  const std::vector<int> cuts = {0, 10, 12, 30};
  std::vector<std::string> parts;
  std::vector<double> borders;
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    const std::string raster = dir.path("part-" + std::to_string(k) + ".tif");
    writeRows(raster, cuts[k], cuts[k + 1] - cuts[k]);
    parts.push_back(dir.path("part-" + std::to_string(k) + ".gpkg"));
    io::polygonizePart(raster, parts.back());
    if (k > 0) borders.push_back(4000000 - 2.0 * cuts[k]);
  }
  io::PolygonizeResult merged;
  {
    AtomicOutput out(dir.path("merged.gpkg"), ".gpkg");
    merged = io::mergePartPolygons(parts, borders, 1e-3, out, names, 0.0);
    out.commit();
  }
  const auto whole = readPolygons(dir.path("whole.gpkg"));
  const auto joined = readPolygons(dir.path("merged.gpkg"));
  ASSERT_EQ(joined.size(), whole.size());
  EXPECT_EQ(merged.polygons, int64_t(whole.size()));
  for (size_t i = 0; i < whole.size(); ++i) {
    EXPECT_EQ(joined[i].cls, whole[i].cls) << i;
    EXPECT_DOUBLE_EQ(joined[i].area, whole[i].area) << i;
    // The same area of the map (GEOS; OGR's Equals compares vertex lists, and a merge may start
    // a ring at another vertex).
    std::unique_ptr<OGRGeometry> apart(joined[i].geometry->SymDifference(whole[i].geometry.get()));
    ASSERT_NE(apart, nullptr);
    EXPECT_EQ(apart->IsEmpty() ? 0.0 : OGR_G_Area(OGRGeometry::ToHandle(apart.get())), 0.0) << i;
  }
  // The shapes by class: one bar (3 pieces), one U (4 pieces), the two corner blocks apart,
  // one ring with its hole (4 pieces); the side-by-side blocks stay in their classes.
  const auto count = [&](int cls) {
    return std::count_if(whole.begin(), whole.end(), [&](const Shape& s) { return s.cls == cls; });
  };
  EXPECT_EQ(count(2), 2);  // the U, and the block beside the bar
  EXPECT_EQ(count(3), 2);
  EXPECT_EQ(count(4), 1);
  const auto ring = std::find_if(joined.begin(), joined.end(), [](const Shape& s) { return s.cls == 4; });
  EXPECT_EQ(ring->geometry->toPolygon()->getNumInteriorRings(), 1);
  EXPECT_DOUBLE_EQ(ring->area, (12 * 9 - 6 * 3) * 4.0);

  // Dropped under the minimum area only once merged: the bar (23 pixels of 4 m2) stays at 90 m2.
  {
    AtomicOutput out(dir.path("large.gpkg"), ".gpkg");
    const auto large = io::mergePartPolygons(parts, borders, 1e-3, out, names, 90.0);
    out.commit();
    const auto whole_large = io::polygonizeClasses(dir.path("whole.tif"), dir.path("whole_large.gpkg"), names, 90.0);
    EXPECT_EQ(large.polygons, whole_large.polygons);
    EXPECT_EQ(large.dropped, whole_large.dropped);
    EXPECT_GT(large.dropped, 0);
  }
}

}  // namespace
}  // namespace geodl
