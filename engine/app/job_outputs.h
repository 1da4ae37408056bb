// Whether GeoDL wrote a file, by its kind: what lets a job replace the file at a derived
// output name (JobOutput::written_by_geodl, base/file_identity.h).
#pragma once

#include <functional>
#include <string>

#include "base/file_kind.h"

namespace geodl {

// GeoTIFF and GeoPackage: GeoDL's mark (io::writtenByGeoDL); a sample store: its
// geodl_version; a model or checkpoint: GeoDL's metadata; text: it starts with `text_start`.
std::function<bool(const std::string&)> writtenByGeoDLCheck(FileKind kind, const std::string& text_start = "");

}  // namespace geodl
