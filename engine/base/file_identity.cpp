#include "base/file_identity.h"

#include <sys/stat.h>

#include <filesystem>

#include "base/atomic_file.h"
#include "base/errors.h"

namespace geodl {

namespace fs = std::filesystem;

bool sameFile(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a), ea), cb = fs::weakly_canonical(fs::absolute(b), eb);
  if (ea || eb) return fs::absolute(a).lexically_normal() == fs::absolute(b).lexically_normal();
  return ca == cb;
}

void checkOutputsSpareInputs(const std::vector<JobFile>& outputs, const std::vector<JobFile>& inputs) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const JobFile& out = outputs[i];
    if (out.path.empty()) continue;
    for (const JobFile& in : inputs)
      if (!in.path.empty() && sameFile(out.path, in.path))
        throw InputError(out.role + " '" + out.path + "' is " + in.role + " '" + in.path +
                         "': GeoDL never writes over a file the job reads; choose another name for " + out.role);
    for (size_t j = 0; j < i; ++j)
      if (!outputs[j].path.empty() && sameFile(out.path, outputs[j].path))
        throw InputError(out.role + " and " + outputs[j].role + " are the same file '" + out.path +
                         "'; give them different names");
  }
}

std::vector<std::string> checkReplaceableOutputs(const std::vector<JobOutput>& outputs) {
  std::vector<std::string> replaced;
  for (const JobOutput& out : outputs) {
    if (out.path.empty()) continue;
    // A symbolic link to nothing (or a loop) would be replaced by the output, as a plain path.
    std::error_code ec;
    if (fs::is_symlink(fs::symlink_status(out.path, ec)) && !fs::exists(out.path, ec))
      throw InputError(out.role + " '" + out.path + "' is a symbolic link to '" +
                       fs::read_symlink(out.path, ec).string() +
                       "', which does not exist (or links back to itself): GeoDL does not write through it; "
                       "remove the link or choose another name");
    const FileKind found = fileKind(out.path);
    if (found == FileKind::Missing) continue;
    if (found == FileKind::Special)  // /dev/null would become a regular file, a FIFO block
      throw InputError(out.role + " '" + out.path + "' is a FIFO, socket or device: GeoDL replaces only regular "
                       "files it writes; choose another name");
    // Text outputs replace text; GeoDL's binary outputs replace their own kind (or an empty file).
    const bool binary = found == FileKind::ZipArchive || found == FileKind::Hdf5 || found == FileKind::GeoTiff ||
                        found == FileKind::GeoPackage;
    const bool same = found == out.kind || found == FileKind::Empty || (out.kind == FileKind::Other && !binary);
    if (found == FileKind::Folder || !same)
      throw InputError(out.role + " '" + out.path + "' exists and is " + describeFileKind(found) + ", not " +
                       (out.kind == FileKind::Other ? std::string("a text file") : describeFileKind(out.kind)) +
                       " as GeoDL writes there: GeoDL does not replace it; move it away or choose another name");
    if (out.derived && !out.overwrite && found != FileKind::Empty && out.written_by_geodl &&
        !out.written_by_geodl(out.path))
      throw InputError(out.role + " '" + out.path + "' exists and GeoDL did not write it: GeoDL made that name (it "
                       "was not given), so it does not replace a file that may be yours; move it away, or give "
                       "--overwrite (in a config: overwrite: true) to replace it");
    replaced.push_back("replacing the existing " + out.role.substr(out.role.rfind("the ", 0) == 0 ? 4 : 0) + " '" +
                       out.path + "'");
  }
  return replaced;
}

void checkOutputNames(const std::vector<JobOutput>& outputs) {
  for (const auto& out : outputs) {
    if (out.path.empty()) continue;
    const std::filesystem::path path = std::filesystem::absolute(out.path);
    const size_t most = fileNameLimit(path.parent_path().string());
    const std::string name = path.filename().string();
    if (name.size() > most)
      throw InputError("the name of " + out.role + " ('" + name.substr(0, 40) + "...') is " +
                       std::to_string(name.size()) + " bytes, more than the " + std::to_string(most) +
                       " its file system allows; choose a shorter name");
    // A GeoTIFF's categories go to NAME.aux.xml beside it, which must fit too.
    const size_t sidecar = std::string(".aux.xml").size();
    if (out.kind == FileKind::GeoTiff && name.size() + sidecar > most)
      throw InputError("the name of " + out.role + " ('" + name.substr(0, 40) + "...') is " +
                       std::to_string(name.size()) + " bytes: its sidecar (NAME.aux.xml, the class names) would pass the " +
                       std::to_string(most) + " bytes its file system allows; choose a name of at most " +
                       std::to_string(most - sidecar) + " bytes");
  }
}

std::vector<std::string> checkJobFiles(const std::vector<JobOutput>& outputs, const std::vector<JobFile>& inputs,
                                       OutputLocks* locks) {
  if (locks)
    for (const auto& out : outputs) locks->lock(out.role, out.path);
  checkOutputNames(outputs);
  std::vector<JobFile> files;
  for (const auto& out : outputs) files.push_back({out.role, out.path});
  checkOutputsSpareInputs(files, inputs);
  std::vector<std::string> replaced = checkReplaceableOutputs(outputs);
  for (const auto& out : outputs)
    if (!out.path.empty()) removeStaleTemporaries(out.path);
  return replaced;
}

}  // namespace geodl
