// An output is refused when it is an input however it is spelt: ./sub/.., a symbolic link,
// a hard link; paths that do not exist yet compare once normalized.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/errors.h"
#include "base/file_identity.h"

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

}  // namespace
}  // namespace geodl
