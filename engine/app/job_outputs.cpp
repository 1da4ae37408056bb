#include "app/job_outputs.h"

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

}  // namespace geodl
