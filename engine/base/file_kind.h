// What a file is, from its first bytes: so that a message names what the user gave (a
// sample store given as a model, a folder, a truncated archive), not advice for another
// kind of file. Standard library only.
#pragma once

#include <cstdint>
#include <string>

namespace geodl {

enum class FileKind { Missing, Folder, Empty, ZipArchive, Hdf5, GeoTiff, GeoPackage, Vrt, Other, Special };

// What the file at `path` is, from its first bytes; Special (a FIFO, socket or device, found
// without opening it: a FIFO would block the read, a device never end) before anything else.
FileKind fileKind(const std::string& path);

// "a sample store or other HDF5 file", "a folder", "an empty file", ...
std::string describeFileKind(FileKind kind);

// The extension of `path` in lower case, with its dot (".tif"); empty without one.
std::string lowercaseExtension(const std::string& path);

// Throws InputError unless an output path ends with an extension of its format (GeoTiff:
// .tif or .tiff; GeoPackage: .gpkg; Vrt: .vrt; in any case), naming `what` and the path. An empty path
// (no such output) passes. The jobs check their outputs with it, for the CLI and QGIS alike.
void checkOutputExtension(const std::string& path, FileKind format, const std::string& what);

// Throws InputError naming `what` ("the prep CSV") and the path when it is a folder, a FIFO,
// socket or device where a file is read: read as a file, a folder fails in the standard
// library's words ("basic_filebuf::underflow"), a FIFO blocks. A missing path passes (each
// reader says "cannot read ... check the path" itself).
void checkReadableFile(const std::string& path, const std::string& what);

// The file's size in bytes (0 when missing).
uint64_t fileSize(const std::string& path);

}  // namespace geodl
