// A terminal progress bar with ETA for the `geodl` command; Ctrl-C cancels.
#pragma once

#include <chrono>
#include <string>

#include "base/progress.h"

namespace geodl::cli {

class ProgressBar final : public Progress {
 public:
  // quiet: log lines only, no bar (e.g. when stderr is not a terminal). A rank other than
  // 0 of a data-parallel job shows only its warnings, prefixed with its rank.
  explicit ProgressBar(bool quiet, int rank = 0);
  ~ProgressBar() override;
  void report(double fraction, const std::string& message) override;
  bool cancelled() const override;
  void log(const std::string& message) override;

 private:
  void clearLine();
  bool quiet_;
  int rank_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

// Installs SIGINT and SIGTERM handlers that ask running jobs to stop (a second one kills).
void installInterruptHandler();

}  // namespace geodl::cli
