#include "core/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace geodl {

namespace {

constexpr double kPi = 3.14159265358979323846;

// PyTorch's _annealing_cos: from `start` at pct 0 to `end` at pct 1 along half a cosine.
double annealCos(double start, double end, double pct) {
  return end + (start - end) / 2.0 * (std::cos(kPi * pct) + 1.0);
}

// ReduceLROnPlateau (mode min, relative threshold, no cooldown) replayed over the losses:
// how many times the rate has been reduced.
int plateauReductions(const Schedule& s, const std::vector<double>& val_losses) {
  double best = INFINITY;
  int bad = 0, reductions = 0;
  for (double loss : val_losses) {
    if (loss < best * (1.0 - kPlateauThreshold)) {
      best = loss;
      bad = 0;
    } else if (++bad > s.step_size) {
      ++reductions;
      bad = 0;
    }
  }
  return reductions;
}

}  // namespace

const std::vector<std::string>& scheduleNames() {
  static const std::vector<std::string> names = {"step", "cosine", "onecycle", "plateau"};
  return names;
}

ScheduleKind scheduleKind(const std::string& name) {
  const auto& names = scheduleNames();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return ScheduleKind(i);
  throw std::invalid_argument("unknown learning-rate schedule '" + name + "'");
}

double learningRate(const Schedule& s, int64_t step, const std::vector<double>& val_losses) {
  const int64_t per_epoch = std::max<int64_t>(s.steps_per_epoch, 1);
  const int64_t total = std::max<int64_t>(int64_t(s.epochs) * per_epoch, 1);
  const int64_t warmup = std::min<int64_t>(int64_t(s.warmup_epochs) * per_epoch, total);
  const int64_t epoch = step / per_epoch;
  if (s.kind == ScheduleKind::OneCycle) {
    const double rise = warmup > 0 ? double(warmup) / double(total) : kOneCycleRise;
    const double start = s.base / kOneCycleDivFactor, end = start / kOneCycleFinalDiv;
    const double peak_step = rise * double(total) - 1.0, last_step = double(total) - 1.0;
    const double x = double(step);
    if (x <= peak_step) return annealCos(start, s.base, peak_step > 0 ? x / peak_step : 1.0);
    return annealCos(s.base, end, last_step > peak_step ? (x - peak_step) / (last_step - peak_step) : 1.0);
  }
  double lr = s.base;
  switch (s.kind) {
    case ScheduleKind::Step:
      lr = s.base * std::pow(s.gamma, double(epoch / std::max(s.step_size, 1)));
      break;
    case ScheduleKind::Cosine:
      if (step >= warmup && total > warmup)
        lr = annealCos(s.base, 0.0, double(step - warmup) / double(total - warmup));
      break;
    case ScheduleKind::Plateau:
      lr = s.base * std::pow(s.gamma, double(plateauReductions(s, val_losses)));
      break;
    case ScheduleKind::OneCycle:
      break;
  }
  if (step < warmup) lr *= double(step + 1) / double(warmup);
  return lr;
}

}  // namespace geodl
