#include "base/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "base/errors.h"

namespace geodl {

namespace fs = std::filesystem;

namespace {

void syncPath(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), directory ? (O_RDONLY | O_DIRECTORY) : O_RDONLY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string temporaryPathFor(const std::string& path, const std::string& suffix) {
  const fs::path target = fs::absolute(path);
  return (target.parent_path() /
          ("." + target.filename().string() + ".tmp-" + std::to_string(::getpid()) + suffix))
      .string();
}

int removeStaleTemporaries(const std::string& path) {
  const fs::path target = fs::absolute(path);
  const std::string prefix = "." + target.filename().string() + ".tmp-";
  std::error_code ec;
  int removed = 0;
  for (const auto& entry : fs::directory_iterator(target.parent_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    size_t end = prefix.size();
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
    if (end == prefix.size()) continue;
    const long pid = std::stol(name.substr(prefix.size(), end - prefix.size()));
    if (pid == long(::getpid()) || ::kill(pid_t(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code gone;
    if (fs::remove(entry.path(), gone)) ++removed;
  }
  return removed;
}

AtomicOutput::AtomicOutput(const std::string& path, const std::string& suffix)
    : path_(fs::absolute(path).string()), temporary_(temporaryPathFor(path, suffix)), committed_(false) {
  removeStaleTemporaries(path_);
}

AtomicOutput::~AtomicOutput() { discard(); }

AtomicOutput::AtomicOutput(AtomicOutput&& other) noexcept
    : path_(std::move(other.path_)), temporary_(std::move(other.temporary_)), committed_(other.committed_) {
  other.committed_ = true;
}

AtomicOutput& AtomicOutput::operator=(AtomicOutput&& other) noexcept {
  if (this != &other) {
    discard();
    path_ = std::move(other.path_);
    temporary_ = std::move(other.temporary_);
    committed_ = other.committed_;
    other.committed_ = true;
  }
  return *this;
}

void AtomicOutput::discard() noexcept {
  if (!committed_) std::remove(temporary_.c_str());
  committed_ = true;
}

void AtomicOutput::commit(const std::string& finished) {
  const std::string from = finished.empty() ? temporary_ : finished;
  syncPath(from, false);
  std::error_code ec;
  fs::rename(from, path_, ec);
  if (ec) {
    std::remove(from.c_str());
    discard();
    throw IoError("cannot move the finished file into place at '" + path_ + "': " + ec.message());
  }
  if (from != temporary_) std::remove(temporary_.c_str());
  committed_ = true;
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
    std::ofstream out(temp, std::ios::binary);
    out << text;
    out.close();
    if (!out) throw IoError("cannot write '" + path + "' (disk full or no permission?)");
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

}  // namespace geodl
