// Outputs written in parts (io/parts_vrt.h): the VRT over the parts reads back as the whole
// raster with its styling, the parts move into place and replace the previous ones, nothing
// is left without commit, and a parts folder GeoDL did not write is refused.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "base/atomic_file.h"
#include "base/file_kind.h"
#include "io/gdal_util.h"
#include "io/geotiff_writer.h"
#include "io/gis_fixtures.h"
#include "io/parts_vrt.h"
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
  EXPECT_EQ(io::partName(12), "part-12.tif");

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
  for (int run = 0; run < 2; ++run) {
    io::PartsOutput out(vrt, spec30x20());
    EXPECT_TRUE(fs::is_directory(out.staging()));
    EXPECT_EQ(fs::path(out.staging()).filename().string().rfind(".c_parts.tmp-", 0), 0u) << out.staging();
    // The second run has three parts where the first had two: none of the first's stays.
    const std::vector<int> cuts = run == 0 ? std::vector<int>{0, 7, 20} : std::vector<int>{0, 5, 12, 20};
    std::vector<io::VrtPart> parts;
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      const std::string path = (fs::path(out.staging()) / io::partName(int(k))).string();
      writePart(path, cuts[k], cuts[k + 1] - cuts[k]);
      parts.push_back({path, cuts[k], cuts[k + 1] - cuts[k]});
    }
    EXPECT_EQ(readAll(out.stagedView(parts)), expected());
    out.commit(parts);
    EXPECT_FALSE(fs::exists(out.staging()));
    EXPECT_EQ(readAll(vrt), expected());
  }
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path("c_parts"))) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"part-0.tif", "part-0.tif.aux.xml", "part-1.tif", "part-1.tif.aux.xml",
                                             "part-2.tif", "part-2.tif.aux.xml"}));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.root()), fs::directory_iterator()), 2);  // c.vrt, c_parts

  // Without commit the staging folder goes with what was written into it; the output stays.
  {
    io::PartsOutput out(vrt, spec30x20());
    writePart((fs::path(out.staging()) / "part-0.tif").string(), 0, 20);
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.root()), fs::directory_iterator()), 2);
  EXPECT_EQ(readAll(vrt), expected());

  // The staging folder of a killed run (a process that no longer runs) goes when the next starts.
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  const std::string stale = dir.path(".c_parts.tmp-" + std::to_string(child));
  fs::create_directories(stale);
  std::ofstream(stale + "/part-0.tif") << "left by a kill -9";
  { io::PartsOutput out(vrt, spec30x20()); }
  EXPECT_FALSE(fs::exists(stale));
}

TEST(PartsVrt, APartsFolderGeoDLDidNotWriteIsRefused) {
  test::TempDir dir;
  const std::string vrt = dir.path("c.vrt");
  io::checkReplaceableParts(vrt, "the class raster");  // none yet
  fs::create_directories(dir.path("c_parts"));
  std::ofstream(dir.path("c_parts/part-0.tif")) << "x";
  std::ofstream(dir.path("c_parts/part-0.tif.aux.xml")) << "x";
  io::checkReplaceableParts(vrt, "the class raster");
  std::ofstream(dir.path("c_parts/notes.txt")) << "mine";
  test::expectErrorContaining([&] { io::checkReplaceableParts(vrt, "the class raster"); },
                              "which holds 'notes.txt', a file GeoDL did not write there; move it away");
  fs::remove_all(dir.path("c_parts"));
  std::ofstream(dir.path("c_parts")) << "a file";
  test::expectErrorContaining([&] { io::checkReplaceableParts(vrt, "the class raster"); },
                              "which is a file, not GeoDL's folder of parts");
}

}  // namespace
}  // namespace geodl
