// Files that are either complete or absent: written under a temporary name in the same
// folder, flushed to disk, then renamed over the destination.
#pragma once

#include <functional>
#include <string>

namespace geodl {

// A temporary name beside `path` for this process: ".NAME.tmp-PID" + suffix.
std::string temporaryPathFor(const std::string& path, const std::string& suffix = "");

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
  // Moves `finished` (default: the temporary; or a file made from it beside it) into place;
  // the temporary is removed. Throws IoError naming the destination.
  void commit(const std::string& finished = "");

 private:
  void discard() noexcept;
  std::string path_, temporary_;
  bool committed_ = true;  // nothing to remove until a path is given
};

// Removes the temporary files beside `path` that processes no longer running left (a kill -9
// in the middle of a write); those of running processes stay. Returns how many went.
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

}  // namespace geodl
