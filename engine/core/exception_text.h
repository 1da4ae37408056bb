// The message of any exception, LibTorch's included, for callers without torch headers.
#pragma once

#include <string>

namespace geodl {

// The message of the exception being handled, inside a catch block (LibTorch's without its
// C++ backtrace): report any error in one line.
std::string describeCurrentException();

}  // namespace geodl
