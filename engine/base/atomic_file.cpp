#include "base/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>
#include <algorithm>

#include "base/errors.h"
#include "base/hard_stop.h"

namespace geodl {

namespace fs = std::filesystem;

namespace {

// Flushes a file or folder to disk; returns 0 or the errno of the failure.
int syncPath(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) return 0;  // nothing to flush
  const int error = ::fsync(fd) == 0 || directory ? 0 : errno;
  ::close(fd);
  return error;
}

// Room a temporary name needs beyond ".NAME": ".tmp-" and a process id, then the suffixes
// writers and libraries add (".gpkg", ".cog.tif", ".aux.xml", "-journal").
constexpr size_t kTemporaryRoom = 5 + 7 + 5 + 8 + 8;

// ".geodl-HASH": a hidden name of fixed length for a file name too long to take a suffix.
std::string hashedName(const std::string& name) {
  uint64_t hash = 1469598103934665603ull;
  for (char c : name) hash = (hash ^ uint8_t(c)) * 1099511628211ull;
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(hash));
  return ".geodl-" + std::string(text);
}
std::string hashedStem(const std::string& name) { return hashedName(name) + ".tmp-"; }

// The prefixes of the temporaries of `target`: the readable one and the hashed one.
std::vector<std::string> temporaryPrefixes(const fs::path& target) {
  const std::string name = target.filename().string();
  return {"." + name + ".tmp-", hashedStem(name)};
}

std::string sizeText(uint64_t bytes) {
  if (bytes >= (uint64_t(1) << 30)) return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (uint64_t(1) << 20)) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

size_t fileNameLimit(const std::string& folder) {
  fs::path existing = fs::absolute(folder);
  std::error_code ec;
  while (!existing.empty() && !fs::exists(existing, ec) && existing != existing.parent_path())
    existing = existing.parent_path();
  const long limit = ::pathconf(existing.c_str(), _PC_NAME_MAX);
  return limit > 0 ? size_t(limit) : size_t(NAME_MAX);
}

std::string temporaryPathFor(const std::string& path, const std::string& suffix) {
  const fs::path target = fs::absolute(path);
  const std::string name = target.filename().string();
  const bool fits = 1 + name.size() + kTemporaryRoom <= fileNameLimit(target.parent_path().string());
  const std::string stem = fits ? "." + name + ".tmp-" : hashedStem(name);
  return (target.parent_path() / (stem + std::to_string(::getpid()) + suffix)).string();
}

std::string partialPathFor(const std::string& path) {
  const fs::path target = fs::absolute(path);
  const std::string name = target.filename().string();
  const bool fits = 1 + name.size() + kTemporaryRoom <= fileNameLimit(target.parent_path().string());
  return (target.parent_path() / ((fits ? "." + name : hashedName(name)) + ".partial")).string();
}

std::string writeFailureReason(const std::string& path, int error, const std::string& fallback) {
  const fs::path folder = fs::absolute(path).parent_path();
  struct statvfs disk {};
  const bool known = ::statvfs(folder.c_str(), &disk) == 0;
  const uint64_t free_bytes = known ? uint64_t(disk.f_bavail) * disk.f_frsize : 0;
  if (error == ENOSPC || error == EDQUOT || (known && free_bytes < (uint64_t(16) << 20)))
    return "no space left on the device holding '" + folder.string() + "'" +
           (known ? " (" + sizeText(free_bytes) + " free)" : std::string()) +
           (error == EDQUOT ? ": the disk quota is used up" : "");
  if (error == EFBIG) return "the file would be larger than the file system or the process's limit (ulimit -f) allows";
  if (error) return std::strerror(error);
  return fallback.empty() ? std::string("the write failed") : fallback;
}

IoError writeFailure(const std::string& what, const std::string& path, int error, const std::string& fallback) {
  const std::string reason = writeFailureReason(path, error, fallback);
  const bool full = reason.rfind("no space left", 0) == 0;
  return IoError("cannot write " + what + ": " + reason +
                 (full ? "; free some space there or choose another folder; nothing was replaced"
                       : "; check the disk and the folder's permissions; nothing was replaced"));
}

FileSink::FileSink(const std::string& path, const std::string& what) : path_(path), what_(what) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw writeFailure(what_, path_, errno);
}

FileSink::~FileSink() {
  if (fd_ >= 0) ::close(fd_);
}

size_t FileSink::write(const void* data, size_t n) {
  const auto* bytes = static_cast<const char*>(data);
  size_t done = 0;
  while (error_ == 0 && done < n) {
    const ssize_t written = ::write(fd_, bytes + done, n - done);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) error_ = written < 0 ? errno : ENOSPC;
    else done += size_t(written);
  }
  return n;
}

void FileSink::close() {
  if (error_ == 0 && ::fsync(fd_) != 0) error_ = errno;
  if (::close(fd_) != 0 && error_ == 0) error_ = errno;
  fd_ = -1;
  if (error_) throw writeFailure(what_, path_, error_);
}

namespace {

// Whether process `pid` still runs: a killed one that its parent has not reaped yet (a zombie)
// does not, and its temporaries are stale already.
bool processRuns(long pid) {
  if (::kill(pid_t(pid), 0) != 0 && errno == ESRCH) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t name_end = text.rfind(')');  // "PID (NAME) STATE ..."
  if (name_end == std::string::npos || name_end + 2 >= text.size()) return true;  // cannot tell: it runs
  const char state = text[name_end + 2];
  return state != 'Z' && state != 'X';
}

}  // namespace

int removeStaleTemporaries(const std::string& path) {
  const fs::path target = fs::absolute(path);
  const std::vector<std::string> prefixes = temporaryPrefixes(target);
  std::error_code ec;
  int removed = 0;
  for (const auto& entry : fs::directory_iterator(target.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    const auto match = std::find_if(prefixes.begin(), prefixes.end(),
                                    [&](const std::string& p) { return name.compare(0, p.size(), p) == 0; });
    if (match == prefixes.end()) continue;
    const std::string& prefix = *match;
    size_t end = prefix.size();
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
    if (end == prefix.size()) continue;
    const long pid = std::stol(name.substr(prefix.size(), end - prefix.size()));
    if (pid == long(::getpid()) || processRuns(pid)) continue;
    std::error_code gone;  // a folder too (the staging folder of a VRT's parts, io/parts_vrt.h)
    if (fs::remove_all(entry.path(), gone) > 0) ++removed;
  }
  return removed;
}

AtomicOutput::AtomicOutput(const std::string& path, const std::string& suffix)
    : path_(fs::absolute(path).string()), temporary_(temporaryPathFor(path, suffix)), committed_(false) {
  removeStaleTemporaries(path_);
  hard_stop::addTemporary(temporary_);
}

AtomicOutput::~AtomicOutput() { discard(); }

AtomicOutput::AtomicOutput(AtomicOutput&& other) noexcept
    : path_(std::move(other.path_)),
      temporary_(std::move(other.temporary_)),
      finished_(std::move(other.finished_)),
      committed_(other.committed_),
      is_finished_(other.is_finished_) {
  other.committed_ = true;
}

AtomicOutput& AtomicOutput::operator=(AtomicOutput&& other) noexcept {
  if (this != &other) {
    discard();
    path_ = std::move(other.path_);
    temporary_ = std::move(other.temporary_);
    finished_ = std::move(other.finished_);
    committed_ = other.committed_;
    is_finished_ = other.is_finished_;
    other.committed_ = true;
  }
  return *this;
}

void AtomicOutput::discard() noexcept {
  if (!committed_) {
    // Emptied first: a library may still hold the file open after a failed close (HDF5
    // does), and an open file keeps its blocks until it is closed.
    for (const std::string* file : {&finished_, &temporary_})
      if (!file->empty()) {
        (void)::truncate(file->c_str(), 0);
        std::remove(file->c_str());
      }
    hard_stop::dropTemporary(temporary_);
  }
  committed_ = true;
}

void AtomicOutput::finish(const std::string& finished) {
  finished_ = finished;
  const std::string& from = this->finished();
  if (const int error = syncPath(from, false)) {
    std::remove(from.c_str());
    discard();
    throw writeFailure("'" + path_ + "'", path_, error);
  }
  is_finished_ = true;
}

void AtomicOutput::commit(const std::string& finished) {
  if (!is_finished_ || (!finished.empty() && finished != finished_)) finish(finished);
  const hard_stop::CommitScope moving;  // a signal now waits until the file is in place
  const std::string from = this->finished();
  std::error_code ec;
  fs::rename(from, path_, ec);
  if (ec) {
    std::remove(from.c_str());
    discard();
    throw IoError("cannot move the finished file into place at '" + path_ + "': " + ec.message());
  }
  if (from != temporary_) std::remove(temporary_.c_str());
  committed_ = true;
  hard_stop::dropTemporary(temporary_);
  syncPath(fs::path(path_).parent_path().string(), true);
}

void writeFileAtomically(const std::string& path,
                         const std::function<void(const std::string&)>& write) {
  AtomicOutput out(path);
  write(out.temporary());
  out.commit();
}

void writeTextAtomically(const std::string& path, const std::string& text) {
  writeFileAtomically(path, [&](const std::string& temp) {
    FileSink out(temp, "'" + fs::absolute(path).string() + "'");
    out.write(text.data(), text.size());
    out.close();
  });
}

void checkWritableFolder(const std::string& folder) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec || !fs::is_directory(folder))
    throw IoError("cannot create the output folder '" + folder + "': " +
                  (ec ? ec.message() : std::string("a file of that name is in the way")) +
                  "; choose a folder you can write to");
  const std::string probe = (fs::path(folder) / (".geodl-write-test-" + std::to_string(::getpid()))).string();
  std::ofstream out(probe);
  const bool ok = bool(out);
  out.close();
  std::remove(probe.c_str());
  if (!ok)
    throw IoError("cannot write in the output folder '" + folder +
                  "' (no permission or read-only disk); choose a folder you can write to");
}

void OutputFolders::create(const std::string& path, bool is_folder) {
  const fs::path target = is_folder ? fs::absolute(path) : fs::absolute(path).parent_path();
  std::vector<std::string> missing;
  std::error_code ec;
  for (fs::path p = target; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p.string());
    if (p == p.parent_path()) break;
  }
  checkWritableFolder(target.string());
  created_.insert(created_.end(), missing.rbegin(), missing.rend());
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) hard_stop::addFolder(*it);
}

OutputFolders::~OutputFolders() {
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    std::error_code ignored;
    fs::remove(*it, ignored);  // only when empty
    hard_stop::dropFolder(*it);
  }
}

}  // namespace geodl
