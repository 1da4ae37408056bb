// The engine's error hierarchy: every message says what was wrong and what to do.
#pragma once

#include <stdexcept>
#include <string>

namespace geodl {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The user asked for something that cannot work (bad option, unknown model...).
class InputError : public Error {
 public:
  using Error::Error;
};

// Reading or writing a file failed.
class IoError : public Error {
 public:
  using Error::Error;
};

// Reading a raster's pixels failed (a damaged or truncated file, a failing disk): the input's
// fault, not the output's, so that a job of many rasters may skip it (classify's on_error).
class RasterReadError : public IoError {
 public:
  using IoError::IoError;
};

// A memory budget (CPU counting allocator or GPU) was exceeded.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

// The user cancelled the job.
class Cancelled : public Error {
 public:
  Cancelled() : Error("cancelled by the user") {}
  explicit Cancelled(const std::string& why) : Error(why) {}
};

}  // namespace geodl
