#include "core/exception_text.h"

#include <c10/util/Exception.h>

namespace geodl {

std::string describeCurrentException() {
  try {
    throw;
  } catch (const c10::Error& e) {
    return e.what_without_backtrace();
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

}  // namespace geodl
