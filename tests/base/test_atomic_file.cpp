// Files written atomically: complete or absent, the old file intact on any failure, no
// temporary left, stale temporaries of dead processes removed; and sub-progress.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/progress.h"

namespace geodl {
namespace {

namespace fs = std::filesystem;

struct Folder {
  fs::path path = fs::temp_directory_path() / ("geodl_atomic_" + std::to_string(::getpid()));
  Folder() { fs::create_directories(path); }
  ~Folder() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  // Every entry, dot files included.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(AtomicFile, ReplacesTheOldFileOnlyWhenComplete) {
  Folder dir;
  const std::string path = dir.file("report.html");
  writeTextAtomically(path, "old");
  EXPECT_THROW(writeFileAtomically(path, [](const std::string& temp) {
                 std::ofstream(temp) << "half";
                 throw IoError("no space left on the device");
               }),
               IoError);
  EXPECT_EQ(read(path), "old");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"report.html"});  // no temporary left
  writeTextAtomically(path, "new");
  EXPECT_EQ(read(path), "new");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"report.html"});
}

TEST(AtomicFile, AnOutputNeverCommittedLeavesNothing) {
  Folder dir;
  std::string temporary;
  {
    AtomicOutput out(dir.file("classes.tif"), ".tif");
    temporary = out.temporary();
    EXPECT_EQ(fs::path(temporary).parent_path(), dir.path);
    std::ofstream(temporary) << "pixels";
    EXPECT_EQ(dir.entries().size(), 1u);
  }
  EXPECT_TRUE(dir.entries().empty());
  {
    AtomicOutput out(dir.file("classes.tif"), ".tif");
    std::ofstream(out.temporary()) << "pixels";
    out.commit();
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"classes.tif"});
}

TEST(AtomicFile, AFailedRenameNamesTheFileAndLeavesNoTemporary) {
  Folder dir;
  fs::create_directories(dir.path / "taken" / "inside");  // a non-empty folder cannot be replaced
  AtomicOutput out(dir.file("taken"));
  std::ofstream(out.temporary()) << "data";
  try {
    out.commit();
    FAIL();
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("taken"), std::string::npos) << e.what();
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"taken"});
}

TEST(AtomicFile, StaleTemporariesOfDeadProcessesGoThoseOfLiveOnesStay) {
  Folder dir;
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // a process id that no longer runs
  const std::string dead = dir.file(".model.pt.tmp-" + std::to_string(child));
  const std::string alive = dir.file(".model.pt.tmp-" + std::to_string(::getppid()));
  const std::string other = dir.file(".other.pt.tmp-" + std::to_string(child));
  for (const auto& p : {dead, alive, other}) std::ofstream(p) << "x";
  EXPECT_EQ(removeStaleTemporaries(dir.file("model.pt")), 1);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(alive));
  EXPECT_TRUE(fs::exists(other));  // another file's
  // Opening an output does the same for its own destination.
  { AtomicOutput out(dir.file("other.pt")); }
  EXPECT_FALSE(fs::exists(other));
}

TEST(SubProgress, MapsItsRangeOntoTheParentAndPassesCancelAndLog) {
  struct Recorder : Progress {
    double last = -1;
    bool stop = false;
    std::vector<std::string> lines;
    void report(double f, const std::string&) override { last = f; }
    bool cancelled() const override { return stop; }
    void log(const std::string& m) override { lines.push_back(m); }
  } parent;
  SubProgress part(parent, 0.25, 0.75);
  part.report(0.0, "");
  EXPECT_DOUBLE_EQ(parent.last, 0.25);
  part.report(0.5, "");
  EXPECT_DOUBLE_EQ(parent.last, 0.5);
  part.report(1.0, "");
  EXPECT_DOUBLE_EQ(parent.last, 0.75);
  part.log("hello");
  EXPECT_EQ(parent.lines, std::vector<std::string>{"hello"});
  EXPECT_NO_THROW(part.checkCancelled());
  parent.stop = true;
  EXPECT_THROW(part.checkCancelled(), Cancelled);
}

}  // namespace
}  // namespace geodl
