// An output is refused when it is an input however it is spelt: ./sub/.., a symbolic link,
// a hard link; paths that do not exist yet compare once normalized.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/errors.h"
#include "base/file_identity.h"
#include "base/file_kind.h"
#include "base/output_lock.h"

namespace geodl {
namespace {

namespace fs = std::filesystem;

TEST(FileIdentity, EverySpellingOfOneFileIsTheSameFile) {
  const fs::path dir = fs::temp_directory_path() / ("geodl_identity_" + std::to_string(::getpid()));
  fs::create_directories(dir / "sub");
  const std::string a = (dir / "a.tif").string();
  std::ofstream(a) << "pixels";
  fs::create_symlink(a, dir / "link.tif");
  fs::create_hard_link(a, dir / "hard.tif");
  std::ofstream((dir / "b.tif").string()) << "other";
  EXPECT_TRUE(sameFile(a, (dir / "sub" / ".." / "a.tif").string()));
  EXPECT_TRUE(sameFile(a, (dir / "link.tif").string()));
  EXPECT_TRUE(sameFile(a, (dir / "hard.tif").string()));
  EXPECT_FALSE(sameFile(a, (dir / "b.tif").string()));
  EXPECT_TRUE(sameFile((dir / "new.tif").string(), (dir / "sub" / ".." / "new.tif").string()));  // not yet written
  EXPECT_FALSE(sameFile((dir / "new.tif").string(), (dir / "new2.tif").string()));
  fs::current_path(dir);
  EXPECT_TRUE(sameFile("a.tif", a));
  fs::current_path(fs::temp_directory_path());
  fs::remove_all(dir);
}

TEST(FileIdentity, AnOutputThatIsAnInputOrAnotherOutputIsRefusedNamingBoth) {
  try {
    checkOutputsSpareInputs({{"the class raster", "/data/a.tif"}}, {{"the input raster", "/data/x/../a.tif"}});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "the class raster '/data/a.tif' is the input raster '/data/x/../a.tif': GeoDL never writes "
                           "over a file the job reads; choose another name for the class raster");
  }
  EXPECT_THROW(checkOutputsSpareInputs({{"the class raster", "/data/c.tif"}, {"the probability raster", "/data/c.tif"}}, {}),
               InputError);
  EXPECT_NO_THROW(checkOutputsSpareInputs({{"the class raster", "/data/c.tif"}, {"the polygon file", ""}},
                                          {{"the input raster", "/data/a.tif"}, {"the mask", ""}}));
}

TEST(FileIdentity, OutputsReplaceOnlyTheirOwnKindOfFileAndSaySo) {
  const fs::path dir = fs::temp_directory_path() / ("geodl_replace_" + std::to_string(::getpid()));
  fs::create_directories(dir / "folder.tif");
  const std::string tif = (dir / "old.tif").string(), gpkg = (dir / "old.gpkg").string(), txt = (dir / "r.html").string();
  std::ofstream(tif) << std::string("II*\0", 4) << "rest of a GeoTIFF";
  std::ofstream(gpkg) << std::string("SQLite format 3\0", 16) << "rest";
  std::ofstream(txt) << "<html></html>";
  EXPECT_EQ(checkReplaceableOutputs({{"the class raster", tif, FileKind::GeoTiff},
                                     {"the report", txt, FileKind::Other},
                                     {"the polygon file", (dir / "new.gpkg").string(), FileKind::GeoPackage}}),
            (std::vector<std::string>{"replacing the existing class raster '" + tif + "'",
                                      "replacing the existing report '" + txt + "'"}));
  try {
    checkReplaceableOutputs({{"the class raster", gpkg, FileKind::GeoTiff}});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("exists and is a GeoPackage"), std::string::npos) << e.what();
  }
  EXPECT_THROW(checkReplaceableOutputs({{"the report", tif, FileKind::Other}}), InputError);  // binary, not text
  EXPECT_THROW(checkReplaceableOutputs({{"the class raster", (dir / "folder.tif").string(), FileKind::GeoTiff}}),
               InputError);
  fs::remove_all(dir);
}

// At a name GeoDL derived (not given), a file of the right kind is replaced only when GeoDL
// wrote it, or with overwrite; a named path is replaced as before; an empty file is no one's.
TEST(FileIdentity, ADerivedOutputReplacesOnlyWhatGeoDLWroteUnlessOverwrite) {
  const fs::path dir = fs::temp_directory_path() / ("geodl_derived_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string theirs = (dir / "x_polygons.gpkg").string(), ours = (dir / "y_polygons.gpkg").string(),
                    empty = (dir / "z_polygons.gpkg").string();
  std::ofstream(theirs) << std::string("SQLite format 3\0", 16) << "a user's";
  std::ofstream(ours) << std::string("SQLite format 3\0", 16) << "GeoDL's";
  std::ofstream(empty).close();
  const auto byGeoDL = [&](const std::string& path) { return path == ours; };
  const auto output = [&](const std::string& path, bool derived, bool overwrite) {
    return JobOutput{"the polygon file", path, FileKind::GeoPackage, derived, overwrite, byGeoDL};
  };
  try {
    checkReplaceableOutputs({output(theirs, true, false)});
    ADD_FAILURE() << "a user's file at a derived name was to be replaced";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the polygon file '" + theirs + "' exists and GeoDL did not write it: "
                                         "GeoDL made that name (it was not given), so it does not replace a file that "
                                         "may be yours; move it away, or give --overwrite"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(checkReplaceableOutputs({output(theirs, true, true), output(ours, true, false), output(empty, true, false),
                                     output(theirs, false, false)})
                .size(),
            4u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace geodl

namespace geodl {
namespace {

// One rule for every output's format, whichever output and whoever asks: .tif and .tiff (any
// case) for the rasters, .gpkg for the vectors; no path, no output.
// A FIFO or device at an output path is refused without opening it, and a link to nothing
// is not written through.
TEST(FileIdentity, SpecialFilesAndDanglingLinksAreRefusedAsOutputs) {
  const fs::path dir = fs::temp_directory_path() / ("geodl_special_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string fifo = (dir / "fifo.tif").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(fileKind(fifo), FileKind::Special);  // returns: the FIFO was not opened
  EXPECT_EQ(fileKind("/dev/null"), FileKind::Special);
  fs::create_symlink(dir / "nowhere.tif", dir / "dangling.tif");
  for (const std::string& path : {fifo, std::string("/dev/null"), (dir / "dangling.tif").string()}) {
    try {
      checkReplaceableOutputs({{"the class raster", path, FileKind::GeoTiff}});
      ADD_FAILURE() << path << " accepted as an output";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_TRUE(what.find("FIFO, socket or device") != std::string::npos ||
                  what.find("symbolic link") != std::string::npos)
          << what;
    }
  }
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir / "dangling.tif")));
  fs::remove_all(dir);
}

// One job at a time per output, within one process too (QGIS runs algorithms side by side);
// every spelling of the path is the same lock, and a job's end frees it.
TEST(OutputLocks, ASecondJobOnTheSameOutputIsRefusedUntilTheFirstEnds) {
  const fs::path dir = fs::temp_directory_path() / ("geodl_locks_" + std::to_string(::getpid()));
  fs::create_directories(dir / "sub");
  const std::string out = (dir / "c.tif").string();
  {
    OutputLocks first;
    first.lock("the class raster", out);
    first.lock("the class raster", out);  // again by the same job: fine
    OutputLocks second;
    try {
      second.lock("the class raster", (dir / "sub" / ".." / "c.tif").string());
      ADD_FAILURE() << "the second job was not refused";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("another GeoDL job (process " + std::to_string(::getpid()) + ")"),
                std::string::npos)
          << e.what();
    }
    second.lock("the probability raster", (dir / "p.tif").string());  // another output: free
  }
  OutputLocks later;
  EXPECT_NO_THROW(later.lock("the class raster", out));
  EXPECT_FALSE(fs::exists(dir / "c.tif")) << "nothing is written beside the output";
  fs::remove_all(dir);
}

TEST(OutputExtension, GeoTiffAndGeoPackageInAnyCase) {
  for (const char* path : {"a.tif", "b/c.tiff", "D.TIF", "e.TIFF"})
    EXPECT_NO_THROW(checkOutputExtension(path, FileKind::GeoTiff, "the probability raster")) << path;
  EXPECT_NO_THROW(checkOutputExtension("f.GPKG", FileKind::GeoPackage, "the polygon file"));
  EXPECT_NO_THROW(checkOutputExtension("", FileKind::GeoTiff, "the probability raster"));
  EXPECT_THROW(checkOutputExtension("g.tif.png", FileKind::GeoTiff, "the class raster"), InputError);
  EXPECT_THROW(checkOutputExtension("h.tif", FileKind::GeoPackage, "the polygon file"), InputError);
  EXPECT_THROW(checkOutputExtension("tif", FileKind::GeoTiff, "the class raster"), InputError);
}

}  // namespace
}  // namespace geodl
