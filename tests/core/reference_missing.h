// What a test does when the Python reference it compares with (python3-torch, torchvision,
// h5py: scripts/install-deps.sh installs them) is missing: it fails, so that CI never passes
// without its references. A developer without them on purpose sets
// GEODL_ALLOW_MISSING_REFERENCES=1, and such tests then skip with the message.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

namespace geodl::test {

inline bool missingReferencesAllowed() {
  const char* allowed = std::getenv("GEODL_ALLOW_MISSING_REFERENCES");
  return allowed && std::strcmp(allowed, "1") == 0;
}

}  // namespace geodl::test

#define GEODL_REFERENCE_MISSING(message)                                                              \
  do {                                                                                                \
    if (!::geodl::test::missingReferencesAllowed())                                                   \
      FAIL() << message << "; the reference is required (GEODL_ALLOW_MISSING_REFERENCES=1 skips it)"; \
    GTEST_SKIP() << message;                                                                          \
  } while (0)
