// docs/options.md: every option of every job, made from the option tables.
#pragma once

#include <string>

namespace geodl {

// The reference in Markdown (`geodl options` prints it; a test keeps docs/options.md in step).
std::string optionsReference();

}  // namespace geodl
