// Outputs written in place by the ranks that share a raster (classify's .vrt outputs): each
// rank writes its band of rows as a tiled GeoTIFF of its own, in a folder beside the output,
// and the output is a GDAL VRT over those parts. Finishing the output costs its metadata and
// a few renames, whatever the raster's size; no rank copies another's pixels.
//
//   classes.vrt                                  the VRT (paths relative to it)
//   classes_parts/part-0.tif, part-1.tif, ...    the ranks' rows, in rank order
//
// While the job runs the parts are written into a staging folder beside the output,
// ".classes_parts.tmp-PID" (PID: the writing rank's); commit() moves the previous parts
// aside, the new ones into place and the new VRT over the old one, then removes the old
// parts. The renames run under hard_stop::CommitScope: a signal waits for them.
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
// "part-3.tif"
std::string partName(int index);

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

// The writing rank's side of one .vrt output: the staging folder (created empty, stale ones of
// dead processes removed), and at the end the parts moved into place under a new VRT. Without
// commit() the staging folder goes, with whatever the ranks wrote into it.
class PartsOutput {
 public:
  // Throws IoError when the staging folder cannot be made.
  PartsOutput(const std::string& vrt, const GeoTiffSpec& spec);
  ~PartsOutput();
  PartsOutput(const PartsOutput&) = delete;
  PartsOutput& operator=(const PartsOutput&) = delete;

  const std::string& staging() const { return staging_; }
  // A VRT in memory (/vsimem/) over the staged parts (`parts`: paths under staging()), to
  // read the whole output before it is committed (polygons).
  const std::string& stagedView(const std::vector<VrtPart>& parts);
  // The staged parts moved into place and the VRT over them written; throws IoError (the
  // previous output then stays as it was).
  void commit(const std::vector<VrtPart>& parts);

 private:
  std::string vrt_, parts_, staging_, view_;
  GeoTiffSpec spec_;
  bool committed_ = false;
};

}  // namespace geodl::io
