// Files that are either complete or absent: written under a temporary name in the same
// folder, flushed to disk, then renamed over the destination.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/errors.h"

namespace geodl {

// A temporary name beside `path` for this process: ".NAME.tmp-PID" + suffix, or, when that
// would pass the file system's name limit (255 bytes) with room for a library's side file
// (a GeoPackage's "-journal"), ".geodl-HASH.tmp-PID" + suffix: an output name up to the
// limit always has a temporary.
std::string temporaryPathFor(const std::string& path, const std::string& suffix = "");

// The hidden name beside `path` of what a stopped job keeps to resume from (no PID: the next
// run finds it): ".NAME.partial", or ".geodl-HASH.partial" where that would pass the limit.
std::string partialPathFor(const std::string& path);

// The longest file name the file system holding `folder` allows (255 on most), asked of
// the nearest folder that exists.
size_t fileNameLimit(const std::string& folder);

// Why writing `path` failed, for a message: "no space left on the device ..." when the file
// system holding it is full (errno ENOSPC or EDQUOT, or almost nothing free: libraries do
// not always keep errno), the file-size limit for EFBIG, else the system's text for `error`
// (0: `fallback`).
std::string writeFailureReason(const std::string& path, int error, const std::string& fallback = "");

// The IoError for a failed write of `what` (e.g. "the model file '/x/model.pt'"), with the
// fix: "cannot write WHAT: REASON; free some space or choose another folder".
IoError writeFailure(const std::string& what, const std::string& path, int error,
                     const std::string& fallback = "");

// A new file written with plain POSIX calls that remembers the first failure instead of
// throwing mid-write (LibTorch's archive writer takes an exception in the middle of a
// write badly: it aborts the process). close() flushes it to disk and throws the failure.
class FileSink {
 public:
  FileSink(const std::string& path, const std::string& what);  // throws IoError
  ~FileSink();
  FileSink(const FileSink&) = delete;
  FileSink& operator=(const FileSink&) = delete;
  // Returns n, whatever happened: the failure is reported by close().
  size_t write(const void* data, size_t n);
  void close();

 private:
  std::string path_, what_;
  int fd_ = -1, error_ = 0;
};

// A file that writers fill over time (rasters, stores, GeoPackages), written under a
// temporary name beside its destination. commit() flushes it to disk, renames it over the
// destination and flushes the folder: a crash at any moment leaves the old file or the new
// one, never a mix. Without commit(), destruction removes the temporary (it never throws).
// Opening one removes the stale temporaries of the same destination.
class AtomicOutput {
 public:
  AtomicOutput() = default;
  explicit AtomicOutput(const std::string& path, const std::string& suffix = "");
  ~AtomicOutput();
  AtomicOutput(AtomicOutput&& other) noexcept;
  AtomicOutput& operator=(AtomicOutput&& other) noexcept;
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  const std::string& path() const { return path_; }
  const std::string& temporary() const { return temporary_; }
  // Flushes `finished` (default: the temporary; or a file made from it beside it) to disk:
  // after it, commit() only renames. Jobs with several outputs finish them all before
  // committing any, so that a full disk leaves every previous output as it was. Throws
  // IoError naming the destination.
  void finish(const std::string& finished = "");
  // The file commit() moves into place: the one given to finish(), or the temporary.
  const std::string& finished() const { return finished_.empty() ? temporary_ : finished_; }
  // Finishes (when finish() was not called) and moves the finished file into place; the
  // temporary is removed. Throws IoError naming the destination.
  void commit(const std::string& finished = "");

 private:
  void discard() noexcept;
  std::string path_, temporary_, finished_;
  bool committed_ = true, is_finished_ = false;  // nothing to remove until a path is given
};

// Removes the temporary files (and staging folders) beside `path` that processes no longer
// running left (a kill -9 in the middle of a write); those of running processes stay. Returns
// how many went.
int removeStaleTemporaries(const std::string& path);

// `write` creates and fills the temporary path it is given; then the file is fsync'ed and
// renamed over `path` (and the folder fsync'ed). A crash at any moment leaves the old
// file or the new one, never a mix. On error the temporary file is removed; throws IoError.
void writeFileAtomically(const std::string& path,
                         const std::function<void(const std::string& temp_path)>& write);

// The same for text.
void writeTextAtomically(const std::string& path, const std::string& text);

// Throws IoError naming the folder when files cannot be created in it (creates it first).
void checkWritableFolder(const std::string& folder);

// The output folders a job makes: created (and checked writable) on demand; when the scope
// ends, those it created that are still empty are removed, deepest first, so that a failed
// run leaves no empty folder behind (a successful one has its outputs in them).
class OutputFolders {
 public:
  OutputFolders() = default;
  ~OutputFolders();
  OutputFolders(const OutputFolders&) = delete;
  OutputFolders& operator=(const OutputFolders&) = delete;
  // The folder of a file (or the folder itself with `is_folder`); throws IoError.
  void create(const std::string& path, bool is_folder = false);

 private:
  std::vector<std::string> created_;
};

}  // namespace geodl
