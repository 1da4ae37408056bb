#include "app/job_outputs.h"

#include <filesystem>
#include <fstream>

#include "base/errors.h"
#include "io/raster.h"
#include "io/sample_store.h"
#include "model/model_info.h"

namespace geodl {

std::function<bool(const std::string&)> writtenByGeoDLCheck(FileKind kind, const std::string& text_start) {
  switch (kind) {
    case FileKind::GeoTiff:
    case FileKind::GeoPackage:
    case FileKind::Vrt:
      return [](const std::string& path) { return io::writtenByGeoDL(path); };
    case FileKind::Hdf5:
      return [](const std::string& path) {
        try {
          return !io::readStoreMetadata(path).metadata.engine_version.empty();
        } catch (const Error&) {
          return false;
        }
      };
    case FileKind::ZipArchive:
      return [](const std::string& path) { return isModelFile(path); };
    default:
      return [text_start](const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        std::string start(text_start.size(), '\0');
        return !text_start.empty() && in.read(start.data(), std::streamsize(start.size())) && start == text_start;
      };
  }
}

nlohmann::json fileRecord(const std::string& path) {
  if (path.empty()) return nullptr;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  const auto modified = std::filesystem::last_write_time(path, ec);
  return {{"path", std::filesystem::absolute(path).lexically_normal().string()},
          {"size", ec ? -1 : int64_t(size)},
          {"modified", ec ? 0 : int64_t(modified.time_since_epoch().count())}};
}

}  // namespace geodl
