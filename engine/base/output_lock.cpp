#include "base/output_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "base/errors.h"

namespace geodl {

namespace fs = std::filesystem;

namespace {

std::string lockFolder() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  fs::path folder = runtime && *runtime && fs::is_directory(runtime)
                        ? fs::path(runtime) / "geodl-locks"
                        : fs::temp_directory_path() / ("geodl-locks-" + std::to_string(::getuid()));
  std::error_code ec;
  fs::create_directories(folder, ec);
  ::chmod(folder.c_str(), 0700);
  return folder.string();
}

// The lock file of an output: a hash of its absolute path, links resolved (two spellings of
// one file share it).
std::string lockFile(const std::string& path) {
  std::error_code ec;
  fs::path full = fs::weakly_canonical(fs::absolute(path), ec);
  if (ec) full = fs::absolute(path).lexically_normal();
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : full.string()) hash = (hash ^ c) * 1099511628211ull;
  char name[32];
  std::snprintf(name, sizeof name, "%016llx.lock", static_cast<unsigned long long>(hash));
  return (fs::path(lockFolder()) / name).string();
}

}  // namespace

void OutputLocks::lock(const std::string& role, const std::string& path) {
  if (path.empty()) return;
  const std::string file = lockFile(path);
  if (std::find(paths_.begin(), paths_.end(), file) != paths_.end()) return;
  const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;  // no runtime folder to lock in: the job runs unlocked
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    const ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
    ::close(fd);
    const std::string holder = n > 0 ? std::string(pid, size_t(n)) : std::string("unknown");
    throw InputError("another GeoDL job (process " + holder + ") is writing " + role + " '" + path +
                     "'; wait for it to end, stop it, or choose another output");
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd, 0) == 0 && ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The PID is only for the message of a refused job.
  }
  paths_.push_back(file);
  fds_.push_back(fd);
}

OutputLocks::~OutputLocks() {
  for (int fd : fds_) ::close(fd);  // frees the lock; the small file stays for the next job
}

}  // namespace geodl
