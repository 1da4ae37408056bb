// Whether an output would replace a file the job reads: checked in every job before anything
// is written, so that no output path (however spelt) destroys an input. Standard library only.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/file_kind.h"
#include "base/output_lock.h"

namespace geodl {

// Two paths name the same file: the same device and inode when both exist, else the same
// absolute path once normalized and its symbolic links resolved.
bool sameFile(const std::string& a, const std::string& b);

// A file a job reads or writes, and what it is to the user ("the input raster").
struct JobFile {
  std::string role;
  std::string path;
};

// Throws InputError naming both when an output is one of the inputs or another output.
// Empty paths are skipped.
void checkOutputsSpareInputs(const std::vector<JobFile>& outputs, const std::vector<JobFile>& inputs);

// An output and the kind of file GeoDL writes there (FileKind::Other: text). A derived one
// (its name made by GeoDL from another: NAME_inference_polygons.gpkg, model.pt in the
// output folder) replaces a file only when `written_by_geodl` says GeoDL wrote it, or with
// `overwrite` (the option of that name): a user's file that happens to bear the name stays.
struct JobOutput {
  std::string role;
  std::string path;
  FileKind kind;
  bool derived = false;
  bool overwrite = false;
  std::function<bool(const std::string&)> written_by_geodl = {};
};

// Outputs that exist are replaced (as QGIS does) when they are files of their own kind
// (and, at a derived name, written by GeoDL); returns a line for the log for each. A folder,
// a file of another kind (a GeoPackage where a GeoTIFF goes, a model where the report goes),
// a FIFO, socket or device, a symbolic link to nothing, and at a derived name a file GeoDL
// did not write (without overwrite) are refused with InputError.
std::vector<std::string> checkReplaceableOutputs(const std::vector<JobOutput>& outputs);

// Throws InputError when an output's name is longer than its file system allows (255 bytes
// on most): derived names (NAME_probabilities.tif) can pass it when the given one does not.
void checkOutputNames(const std::vector<JobOutput>& outputs);

// What every job does with its files before it writes any: with `locks` (the process that
// writes them; not the other ranks), each output locked for the job's life; the checks above;
// then the stale temporaries a killed run left beside each output are removed. Returns the
// log lines of the outputs that will be replaced.
std::vector<std::string> checkJobFiles(const std::vector<JobOutput>& outputs, const std::vector<JobFile>& inputs,
                                       OutputLocks* locks = nullptr);

}  // namespace geodl
