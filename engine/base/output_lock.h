// One job at a time per output: a job holds a lock on each file it writes for as long as it
// runs, so that a second job writing the same file (another process, or another algorithm in
// the same QGIS) is refused, naming the first one's process, instead of both writing it. The
// locks are flock()s on small files in the user's runtime folder (XDG_RUNTIME_DIR, else
// /tmp/geodl-locks-UID), one per output path, never beside the outputs: the kernel frees
// them when the process ends, however it ends, so a dead job's lock is simply free again.
// Standard library and POSIX only.
#pragma once

#include <string>
#include <vector>

namespace geodl {

class OutputLocks {
 public:
  OutputLocks() = default;
  ~OutputLocks();
  OutputLocks(const OutputLocks&) = delete;
  OutputLocks& operator=(const OutputLocks&) = delete;

  // Locks `path` (`role`: "the class raster"); InputError naming the holder's PID when another
  // job holds it. An empty path, or a path already locked here, passes.
  void lock(const std::string& role, const std::string& path);

 private:
  std::vector<std::string> paths_;
  std::vector<int> fds_;
};

}  // namespace geodl
