// One progress interface for the engine: fraction, message, cancellation.
#pragma once

#include <string>

namespace geodl {

class Progress {
 public:
  virtual ~Progress() = default;
  // fraction in [0, 1] of the whole job; message may be empty.
  virtual void report(double fraction, const std::string& message) = 0;
  virtual bool cancelled() const = 0;
  // A line for the log (the CLI prints it, QGIS shows it in the log panel).
  virtual void log(const std::string& /*message*/) {}

  // Throws Cancelled when the user asked to stop.
  void checkCancelled() const;
};

// Progress that goes nowhere and is never cancelled.
class NullProgress final : public Progress {
 public:
  void report(double, const std::string&) override {}
  bool cancelled() const override { return false; }
};

// Maps [0, 1] of a sub-task onto [begin, end] of its parent.
class SubProgress final : public Progress {
 public:
  SubProgress(Progress& parent, double begin, double end);
  void report(double fraction, const std::string& message) override;
  bool cancelled() const override { return parent_.cancelled(); }
  void log(const std::string& message) override { parent_.log(message); }

 private:
  Progress& parent_;
  double begin_;
  double end_;
};

}  // namespace geodl
