// Files that are either complete or absent: written under a temporary name in the same
// folder, flushed to disk, then renamed over the destination.
#pragma once

#include <functional>
#include <string>

namespace geodl {

// A temporary name beside `path` for this process: ".NAME.tmp-PID" + suffix.
std::string temporaryPathFor(const std::string& path, const std::string& suffix = "");

// `write` creates and fills the temporary path it is given; then the file is fsync'ed and
// renamed over `path` (and the folder fsync'ed). A crash at any moment leaves the old
// file or the new one, never a mix. On error the temporary file is removed; throws IoError.
void writeFileAtomically(const std::string& path,
                         const std::function<void(const std::string& temp_path)>& write);

// The same for text.
void writeTextAtomically(const std::string& path, const std::string& text);

// Throws IoError naming the folder when files cannot be created in it (creates it first).
void checkWritableFolder(const std::string& folder);

}  // namespace geodl
