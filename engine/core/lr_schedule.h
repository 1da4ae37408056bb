// The learning rate of every optimizer step: a pure function of the schedule, the step and
// (for plateau) the validation losses so far, so that a resumed run continues the curve.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace geodl {

enum class ScheduleKind {
  Step,      // base * gamma^floor(epoch / step_size) (geo-deep-learning's StepLR)
  Cosine,    // from base down to 0 along half a cosine, over the steps after warm-up
  OneCycle,  // PyTorch's OneCycleLR: up from base/25 to base, then down to base/250000
  Plateau,   // PyTorch's ReduceLROnPlateau: * gamma after step_size epochs without progress
};

// The names configs and flags use ("step", "cosine", "onecycle", "plateau").
const std::vector<std::string>& scheduleNames();
ScheduleKind scheduleKind(const std::string& name);  // std::invalid_argument if unknown

struct Schedule {
  ScheduleKind kind = ScheduleKind::Step;
  double base = 1e-3;          // the learning rate (onecycle: its peak)
  int epochs = 1;
  int64_t steps_per_epoch = 1;
  int step_size = 1;           // step: epochs per decay; plateau: epochs without progress
  double gamma = 0.5;          // step, plateau: the factor
  int warmup_epochs = 0;       // linear warm-up from 0 over these epochs' steps (onecycle: its rise)
};

// PyTorch's OneCycleLR and ReduceLROnPlateau defaults.
constexpr double kOneCycleRise = 0.3;       // the share of the steps rising, without warm-up
constexpr double kOneCycleDivFactor = 25;   // start: base / 25
constexpr double kOneCycleFinalDiv = 1e4;   // end: start / 1e4
constexpr double kPlateauThreshold = 1e-4;  // progress: below best * (1 - 1e-4)

// The learning rate at optimizer step `step` (0-based over the whole run). `val_losses`:
// the validation losses of the epochs before this step's (plateau only).
double learningRate(const Schedule& schedule, int64_t step, const std::vector<double>& val_losses = {});

}  // namespace geodl
