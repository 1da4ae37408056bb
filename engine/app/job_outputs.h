// Whether GeoDL wrote a file, by its kind: what lets a job replace the file at a derived
// output name (JobOutput::written_by_geodl, base/file_identity.h).
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/file_kind.h"

namespace geodl {

// GeoTIFF and GeoPackage: GeoDL's mark (io::writtenByGeoDL); a sample store: its
// geodl_version; a model or checkpoint: GeoDL's metadata; text: it starts with `text_start`.
std::function<bool(const std::string&)> writtenByGeoDLCheck(FileKind kind, const std::string& text_start = "");

// A file a job reads or wrote, as a resume records it (classify's and samples' journals):
// its absolute path, size and modification time; null for an empty path. A resumed job reads
// the same bytes only where the records are equal.
nlohmann::json fileRecord(const std::string& path);

}  // namespace geodl
