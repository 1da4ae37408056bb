#include "base/file_kind.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <vector>

#include "base/errors.h"
#include <filesystem>
#include <fstream>

namespace geodl {

namespace fs = std::filesystem;

FileKind fileKind(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return FileKind::Missing;
  if (fs::is_directory(path, ec)) return FileKind::Folder;
  if (!fs::is_regular_file(path, ec)) return FileKind::Special;
  std::ifstream in(path, std::ios::binary);
  char head[16] = {};
  in.read(head, sizeof head);
  const std::streamsize n = in.gcount();
  if (n == 0) return FileKind::Empty;
  if (n >= 4 && std::memcmp(head, "PK\x03\x04", 4) == 0) return FileKind::ZipArchive;
  if (n >= 8 && std::memcmp(head, "\x89HDF\r\n\x1a\n", 8) == 0) return FileKind::Hdf5;
  if (n >= 4 && (std::memcmp(head, "II*\0", 4) == 0 || std::memcmp(head, "MM\0*", 4) == 0 ||
                 std::memcmp(head, "II+\0", 4) == 0 || std::memcmp(head, "MM\0+", 4) == 0))
    return FileKind::GeoTiff;
  if (n >= 16 && std::memcmp(head, "SQLite format 3\0", 16) == 0) return FileKind::GeoPackage;
  if (n >= 11 && std::memcmp(head, "<VRTDataset", 11) == 0) return FileKind::Vrt;
  return FileKind::Other;
}

void checkReadableFile(const std::string& path, const std::string& what) {
  const FileKind kind = fileKind(path);
  if (kind == FileKind::Folder)
    throw InputError(what + " '" + path + "' is a folder, not a file; give the file itself");
  if (kind == FileKind::Special)
    throw InputError(what + " '" + path + "' is a FIFO, socket or device, not a regular file; give a file");
}

std::string describeFileKind(FileKind kind) {
  switch (kind) {
    case FileKind::Missing: return "missing";
    case FileKind::Folder: return "a folder";
    case FileKind::Empty: return "an empty file";
    case FileKind::ZipArchive: return "a LibTorch archive";
    case FileKind::Hdf5: return "a sample store or other HDF5 file";
    case FileKind::GeoTiff: return "a GeoTIFF raster";
    case FileKind::GeoPackage: return "a GeoPackage (or other SQLite file)";
    case FileKind::Vrt: return "a GDAL VRT";
    case FileKind::Other: return "a file of another kind";
    case FileKind::Special: return "a FIFO, socket or device (not a regular file)";
  }
  return "";
}

uint64_t fileSize(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : uint64_t(size);
}

std::string lowercaseExtension(const std::string& path) {
  std::string extension = fs::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return extension;
}

void checkOutputExtension(const std::string& path, FileKind format, const std::string& what) {
  if (path.empty()) return;
  const std::string extension = lowercaseExtension(path);
  const bool tiff = format == FileKind::GeoTiff, vrt = format == FileKind::Vrt;
  const std::vector<std::string> allowed = tiff  ? std::vector<std::string>{".tif", ".tiff"}
                                           : vrt ? std::vector<std::string>{".vrt"}
                                                 : std::vector<std::string>{".gpkg"};
  if (std::find(allowed.begin(), allowed.end(), extension) != allowed.end()) return;
  throw InputError(what + (tiff  ? " is written as GeoTIFF: give a .tif or .tiff file"
                           : vrt ? " is written as a GDAL VRT over its parts: give a .vrt file"
                                 : " is written as a GeoPackage: give a .gpkg file") +
                   " (got '" + path + "')");
}

}  // namespace geodl
