// Outputs written in place by the ranks that share a raster (classify's .vrt outputs): each
// rank writes the blocks of rows it computes as tiled GeoTIFFs of their own, in a folder
// beside the output, and the output is a GDAL VRT over those parts. Finishing the output
// costs its metadata and a few renames, whatever the raster's size; no rank copies another's
// pixels.
//
//   classes.vrt                                          the VRT (paths relative to it)
//   classes_parts/block-000000.tif, block-000001.tif ... the blocks of rows, in order
//
// While the job runs the blocks are written into the run's journal beside the output,
// ".classes.vrt.partial" (io/block_journal.h: a stopped run resumes from it); commit() moves
// the previous parts aside, the journal's blocks into place and the new VRT over the old one,
// then removes the old parts. The renames run under hard_stop::CommitScope: a signal waits
// for them.
#pragma once

#include <string>
#include <vector>

#include "base/file_kind.h"
#include "io/geotiff_writer.h"

namespace geodl::io {

// Whether `path` names a VRT (.vrt, in any case): classify then writes it in parts.
bool isVrtPath(const std::string& path);
// The kind of file a class or probability raster output is: a VRT over parts (.vrt) or a
// GeoTIFF (anything else, which the extension check then refuses unless .tif or .tiff).
FileKind rasterOutputKind(const std::string& path);
// "X_parts" beside "X.vrt".
std::string partsFolderOf(const std::string& vrt);

// Throws InputError when the parts folder of `vrt` exists and is not one GeoDL wrote (a file,
// or a folder holding anything but parts and their sidecars): GeoDL removes only its own.
// `role`: "the class raster".
void checkReplaceableParts(const std::string& vrt, const std::string& role);

// One part: a GeoTIFF of the output's width holding rows [y0, y0 + rows) of its grid.
struct VrtPart {
  std::string path;
  int y0 = 0, rows = 0;
};

// The text of a VRT at `vrt` over `parts`, styled by `spec` (size, grid, CRS, nodata, colours,
// category and band names, GeoDL's mark); a part under the VRT's folder is named relative to
// it. Rows no part holds read as the nodata value (0 without one).
std::string partsVrtXml(const std::string& vrt, const std::vector<VrtPart>& parts, const GeoTiffSpec& spec);

// A VRT in memory (/vsimem/) over `parts`, to read them as one raster (polygons); gone with
// the object. Throws IoError.
class MemoryVrt {
 public:
  MemoryVrt(const std::vector<VrtPart>& parts, const GeoTiffSpec& spec);
  ~MemoryVrt();
  MemoryVrt(const MemoryVrt&) = delete;
  MemoryVrt& operator=(const MemoryVrt&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The writing rank's side of one .vrt output: at the end, the parts in `staging` (the run's
// journal folder, which stays when there is no commit) moved into place under a new VRT.
class PartsOutput {
 public:
  PartsOutput(const std::string& vrt, const GeoTiffSpec& spec, const std::string& staging);
  PartsOutput(const PartsOutput&) = delete;
  PartsOutput& operator=(const PartsOutput&) = delete;

  // The staged parts moved into place and the VRT over them written; throws IoError (the
  // previous output and the staged parts then stay as they were).
  void commit(const std::vector<VrtPart>& parts);

 private:
  std::string vrt_, parts_, staging_;
  GeoTiffSpec spec_;
};

}  // namespace geodl::io
