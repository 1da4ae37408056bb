#include "core/exception_text.h"

#include <c10/util/Exception.h>

#include <cctype>
#include <filesystem>
#include <ios>
#include <system_error>

namespace geodl {

std::string describeCurrentException() {
  try {
    throw;
  } catch (const c10::Error& e) {
    return e.what_without_backtrace();
  } catch (const std::filesystem::filesystem_error& e) {
    // The standard library's "filesystem error: status: ..." in GeoDL's words, naming the path.
    std::string paths = "'" + e.path1().string() + "'";
    if (!e.path2().empty()) paths += " and '" + e.path2().string() + "'";
    std::string reason = e.code().message();
    for (char& c : reason) c = char(std::tolower(static_cast<unsigned char>(c)));
    return "cannot use the path " + paths + ": " + reason +
           (e.code() == std::errc::filename_too_long ? "; choose a shorter name (255 bytes per name, on most disks)"
            : e.code() == std::errc::too_many_symbolic_link_levels
                ? "; its symbolic links lead in a circle: fix or remove them"
            : e.code() == std::errc::permission_denied ? "; choose a path you may read and write, or fix its permissions"
                                                        : "; check the path");
  } catch (const std::ios_base::failure& e) {
    // libstdc++'s "basic_filebuf::underflow error reading the file: ...": a read failed below
    // the reader (the readers check for folders and FIFOs first).
    return std::string("reading a file failed: the system said \"") + e.what() +
           "\"; check the disk (dmesg shows its errors) and copy the input files again";
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

}  // namespace geodl
