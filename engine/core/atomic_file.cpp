#include "core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "core/errors.h"

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

void writeFileAtomically(const std::string& path,
                         const std::function<void(const std::string&)>& write) {
  const fs::path target = fs::absolute(path);
  const std::string temp = temporaryPathFor(path);
  try {
    write(temp);
    syncPath(temp, false);
  } catch (...) {
    std::remove(temp.c_str());
    throw;
  }
  std::error_code ec;
  fs::rename(temp, target, ec);
  if (ec) {
    std::remove(temp.c_str());
    throw IoError("cannot move the finished file into place at '" + target.string() +
                  "': " + ec.message());
  }
  syncPath(target.parent_path().string(), true);
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
