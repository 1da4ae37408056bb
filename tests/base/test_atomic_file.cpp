// Files written atomically: complete or absent, the old file intact on any failure, no
// temporary left, stale temporaries of dead processes removed; and sub-progress.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
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
  // A process killed but not yet reaped by its parent (a zombie: a rank the moment after a
  // kill -9) runs no more: its temporaries are stale.
  const pid_t zombie = ::fork();
  if (zombie == 0) ::_exit(0);
  siginfo_t info{};
  ::waitid(P_PID, id_t(zombie), &info, WEXITED | WNOWAIT);  // exited, left unreaped
  ASSERT_EQ(::kill(zombie, 0), 0);
  const std::string unreaped = dir.file(".model.pt.tmp-" + std::to_string(zombie));
  std::ofstream(unreaped) << "x";
  EXPECT_EQ(removeStaleTemporaries(dir.file("model.pt")), 1);
  EXPECT_FALSE(fs::exists(unreaped));
  ::waitpid(zombie, nullptr, 0);
}

TEST(AtomicFile, NamesUpToTheFileSystemLimitHaveTemporariesWithinIt) {
  Folder dir;
  for (size_t length : {200u, 230u, 250u, 255u}) {
    const std::string name = std::string(length - 4, 'n') + ".gpk";
    AtomicOutput out(dir.file(name), ".gpkg");
    EXPECT_LE(fs::path(out.temporary()).filename().string().size() + 8, 255u) << length;  // + "-journal"
    std::ofstream(out.temporary()) << "layer";
    std::ofstream(out.temporary() + "-journal") << "side file";
    out.commit();
    EXPECT_EQ(read(dir.file(name)), "layer");
    std::remove((out.temporary() + "-journal").c_str());
  }
  // The stale temporaries of a long name are found under its hashed name too.
  const std::string name = std::string(250, 'x') + ".tif";
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  const std::string mine = temporaryPathFor(dir.file(name));
  const std::string stale = mine.substr(0, mine.rfind('-') + 1) + std::to_string(child) + ".tif";
  std::ofstream(stale) << "half";
  ASSERT_TRUE(fs::exists(stale));
  EXPECT_EQ(removeStaleTemporaries(dir.file(name)), 1);
}

TEST(AtomicFile, AFullDiskIsNamedWithTheFileAndNothingIsReplaced) {
  // /dev/full fails every write with ENOSPC: the sink keeps going, close() reports it.
  FileSink sink("/dev/full", "the model file 'm.pt'");
  EXPECT_EQ(sink.write("0123456789", 10), 10u);
  try {
    sink.close();
    FAIL() << "no error";
  } catch (const IoError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cannot write the model file 'm.pt': no space left on the device"), std::string::npos) << m;
    EXPECT_NE(m.find("free some space there or choose another folder"), std::string::npos) << m;
  }
  EXPECT_NE(writeFailureReason("/x/y", EFBIG).find("ulimit -f"), std::string::npos);
  EXPECT_NE(writeFailureReason(fs::temp_directory_path() / "f", EACCES).find("ermission"), std::string::npos);
}

TEST(AtomicFile, OutputsFinishedTogetherReplaceNothingUntilAllAreComplete) {
  Folder dir;
  writeTextAtomically(dir.file("a.txt"), "old a");
  writeTextAtomically(dir.file("b.txt"), "old b");
  {
    AtomicOutput a(dir.file("a.txt")), b(dir.file("b.txt"));
    std::ofstream(a.temporary()) << "new a";
    a.finish();
    EXPECT_EQ(a.finished(), a.temporary());
    // b fails before it is finished: neither replaces its old file.
  }
  EXPECT_EQ(read(dir.file("a.txt")), "old a");
  EXPECT_EQ(read(dir.file("b.txt")), "old b");
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"a.txt", "b.txt"}));
  AtomicOutput a(dir.file("a.txt")), b(dir.file("b.txt"));
  std::ofstream(a.temporary()) << "new a";
  std::ofstream(b.temporary() + ".made") << "new b";  // a file made from the temporary
  a.finish();
  b.finish(b.temporary() + ".made");
  a.commit();
  b.commit();
  EXPECT_EQ(read(dir.file("a.txt")), "new a");
  EXPECT_EQ(read(dir.file("b.txt")), "new b");
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"a.txt", "b.txt"}));
}

TEST(OutputFolders, AFailedJobLeavesNoEmptyFolderItCreated) {
  Folder dir;
  fs::create_directories(dir.path / "existing");
  {
    OutputFolders folders;
    folders.create(dir.file("new/deeper/model"), true);
    folders.create(dir.file("existing/out.tif"));
    folders.create(dir.file("kept/out.tif"));
    EXPECT_TRUE(fs::is_directory(dir.path / "new" / "deeper" / "model"));
    std::ofstream(dir.file("kept/out.tif")) << "written";
  }
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"existing", "kept"}));
  OutputFolders folders;
  std::ofstream(dir.file("file")) << "x";
  EXPECT_THROW(folders.create(dir.file("file/out.tif")), IoError);  // a file in the way
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
