// What a process stopped by a signal must undo when its job cannot stop by itself within a
// second: the signal came while a config was read, a file opened (a library blocked on it),
// a model loaded, or a step of a loop ran too long. The job's outputs register their
// temporary files and the folders they created here; the CLI's signal watchdog then calls
// removeForHardStop() and ends the process, leaving what a cancelled job leaves: the outputs
// that were complete before it started, nothing half-written. Standard library only.
#pragma once

#include <functional>
#include <string>

namespace geodl::hard_stop {

// AtomicOutput's temporaries and staging folders (every file or folder whose name starts with
// the path goes: the side files libraries make beside a temporary, such as GDAL's .aux.xml, too).
void addTemporary(const std::string& path);
void dropTemporary(const std::string& path);
// The folders OutputFolders created (removed when empty, deepest first).
void addFolder(const std::string& path);
void dropFolder(const std::string& path);

// Outputs being moved into place: a hard stop waits until every one of them is (several
// outputs of one job are moved together or not at all).
class CommitScope {
 public:
  CommitScope();
  ~CommitScope();
  CommitScope(const CommitScope&) = delete;
  CommitScope& operator=(const CommitScope&) = delete;
};

// A job loop that checks for cancellation at every step (a batch, a block, a window) and so
// stops by itself at its next step: while one runs, a signal waits up to `seconds` for it (by
// default the grace, kGraceMs: a step that lasts longer, or blocks on a file, is stopped; its
// job loses nothing a stop at its next step would keep). Once the loop has ended (it
// stopped), the job has the grace again to leave with its own message. The launcher of
// ranks waits longer.
class LoopScope {
 public:
  explicit LoopScope(double seconds = 0);
  ~LoopScope();
  LoopScope(const LoopScope&) = delete;
  LoopScope& operator=(const LoopScope&) = delete;
};

// What the process says when it is stopped (e.g. training: whether there is a checkpoint to
// resume), instead of the general words; set while the job runs.
class StopNote {
 public:
  explicit StopNote(std::function<std::string()> note);
  ~StopNote();
  StopNote(const StopNote&) = delete;
  StopNote& operator=(const StopNote&) = delete;
};

// The time a job has to stop by itself: 0.8 s, so that with the process's exit it ends
// within a second of the signal.
constexpr long long kGraceMs = 800;

// When a job signalled at `signal_ms` must be stopped (monotonic milliseconds, as
// monotonicMs()): with a LoopScope running, `seconds` of the longest after the signal (at
// least the grace); with none, the grace after the signal or after the last loop ended
// (the job is then on its way out), whichever is later.
long long deadlineMs(long long signal_ms);
long long monotonicMs();

// Waits for a CommitScope in progress, removes the registered temporaries and the empty
// folders, and returns the note to print. The caller then ends the process; nothing
// registers afterwards (a CommitScope blocks).
std::string removeForHardStop();

}  // namespace geodl::hard_stop
