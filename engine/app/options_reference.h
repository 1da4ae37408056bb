// docs/options.md: every option of every job, made from the option tables.
#pragma once

#include <string>

namespace geodl {

// The reference in Markdown (`geodl options` prints it; a test keeps docs/options.md in step).
std::string optionsReference();

// The Processing parameters of each algorithm, each with the config key (or flag) of its
// option, in a paragraph per algorithm: the README's list (`geodl options --qgis` prints it;
// a test keeps the README in step).
std::string processingParameterSummary();

}  // namespace geodl
