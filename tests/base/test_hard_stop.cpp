// What a hard stop (a signal where the job cannot stop by itself) removes, and when it comes.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/hard_stop.h"

namespace geodl {
namespace {

namespace fs = std::filesystem;

// A stop outside any loop comes the grace (0.8 s) after the signal; inside a loop, its limit
// after the signal; after the loop ended, the grace after its end.
TEST(HardStop, TheDeadlineIsASecondOutsideLoopsAndTheLoopsLimitInside) {
  const long long signal = hard_stop::monotonicMs() + 60000;  // later than any loop's end so far
  EXPECT_EQ(hard_stop::deadlineMs(signal), signal + hard_stop::kGraceMs);
  {
    const hard_stop::LoopScope loop(10);
    EXPECT_EQ(hard_stop::deadlineMs(signal), signal + 10000);
    const hard_stop::LoopScope inner(2);
    EXPECT_EQ(hard_stop::deadlineMs(signal), signal + 10000);  // the longest running
  }
  const long long ended = hard_stop::monotonicMs(), early = ended - 5000;  // signalled before the loop ended
  EXPECT_GE(hard_stop::deadlineMs(early), ended + hard_stop::kGraceMs);
  EXPECT_LE(hard_stop::deadlineMs(early), hard_stop::monotonicMs() + hard_stop::kGraceMs);
  const hard_stop::LoopScope by_default;  // the grace
  EXPECT_EQ(hard_stop::deadlineMs(signal), signal + hard_stop::kGraceMs);
}

// The temporaries of outputs being written (and the side files beside them) and the
// folders made for them go; finished outputs, other files and folders holding them stay.
// Run in a child: the registry is the process's, and a hard stop holds it for good.
TEST(HardStop, RemovesTheTemporariesAndTheFoldersMadeAndKeepsTheRest) {
  const fs::path root = fs::temp_directory_path() / ("geodl-hard-stop-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root);
  std::ofstream(root / "kept.txt") << "the user's";
  const pid_t child = ::fork();
  if (child == 0) {
    int status = 0;
    try {
      writeTextAtomically((root / "done.txt").string(), "complete");  // committed before the stop
      OutputFolders folders;
      folders.create((root / "new" / "deeper" / "out.tif").string());
      AtomicOutput busy((root / "new" / "deeper" / "out.tif").string(), ".tif");
      std::ofstream(busy.temporary()) << "half";
      std::ofstream(busy.temporary() + ".aux.xml") << "a library's side file";
      AtomicOutput other((root / "other.gpkg").string());
      std::ofstream(other.temporary()) << "half";
      const hard_stop::StopNote note([] { return std::string("what the job says"); });
      status = hard_stop::removeForHardStop() == "what the job says" ? 0 : 2;
    } catch (...) {
      status = 3;
    }
    ::_exit(status);  // as the watchdog does: no destructor runs
  }
  int status = -1;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::vector<std::string> left;
  for (const auto& entry : fs::recursive_directory_iterator(root)) left.push_back(entry.path().lexically_relative(root).string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"done.txt", "kept.txt"}));
  fs::remove_all(root);
}

}  // namespace
}  // namespace geodl
