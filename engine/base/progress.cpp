#include "base/progress.h"

#include <algorithm>

#include "base/errors.h"

namespace geodl {

void Progress::checkCancelled() const {
  if (cancelled()) throw Cancelled();
}

SubProgress::SubProgress(Progress& parent, double begin, double end)
    : parent_(parent), begin_(begin), end_(end) {}

void SubProgress::report(double fraction, const std::string& message) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  parent_.report(begin_ + (end_ - begin_) * fraction, message);
}

}  // namespace geodl
