// The learning-rate schedules against values worked out by hand and against PyTorch's own
// schedulers (python3-torch), step by step.
#include <gtest/gtest.h>

#include "core/reference_missing.h"

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "core/lr_schedule.h"
#include "core/test_support.h"

namespace geodl {
namespace {

Schedule schedule(ScheduleKind kind, double base, int epochs, int64_t per_epoch) {
  Schedule s;
  s.kind = kind;
  s.base = base;
  s.epochs = epochs;
  s.steps_per_epoch = per_epoch;
  return s;
}

TEST(LearningRate, HandValues) {
  // Step: x0.5 every 2 epochs of 3 steps.
  auto s = schedule(ScheduleKind::Step, 1, 6, 3);
  s.step_size = 2;
  s.gamma = 0.5;
  EXPECT_DOUBLE_EQ(learningRate(s, 0), 1);
  EXPECT_DOUBLE_EQ(learningRate(s, 5), 1);
  EXPECT_DOUBLE_EQ(learningRate(s, 6), 0.5);
  EXPECT_DOUBLE_EQ(learningRate(s, 17), 0.25);
  // Warm-up over the first epoch: 1/3, 2/3, then the schedule.
  s.warmup_epochs = 1;
  EXPECT_DOUBLE_EQ(learningRate(s, 0), 1.0 / 3);
  EXPECT_DOUBLE_EQ(learningRate(s, 1), 2.0 / 3);
  EXPECT_DOUBLE_EQ(learningRate(s, 3), 1);
  // Cosine over the 8 steps after 2 of warm-up: half way (step 6) is base/2, and the last
  // step (9, 7/8 of the way) base (1 + cos(7 pi / 8)) / 2.
  auto c = schedule(ScheduleKind::Cosine, 1, 10, 1);
  c.warmup_epochs = 2;
  EXPECT_DOUBLE_EQ(learningRate(c, 0), 0.5);
  EXPECT_DOUBLE_EQ(learningRate(c, 1), 1.0);
  EXPECT_DOUBLE_EQ(learningRate(c, 2), 1.0);
  EXPECT_NEAR(learningRate(c, 6), 0.5, 1e-15);
  EXPECT_NEAR(learningRate(c, 9), (1 + std::cos(7 * M_PI / 8)) / 2, 1e-15);
  // One cycle over 10 steps: rising to step 2 (30% of 10, less one), from 1/25.
  const auto o = schedule(ScheduleKind::OneCycle, 1, 10, 1);
  EXPECT_NEAR(learningRate(o, 0), 0.04, 1e-15);
  EXPECT_NEAR(learningRate(o, 1), 1 - 0.96 / 2, 1e-15);
  EXPECT_NEAR(learningRate(o, 2), 1, 1e-15);
  EXPECT_NEAR(learningRate(o, 9), 0.04 / 1e4, 1e-18);
  // Plateau: patience 1; losses 1, 0.5, 0.6, 0.7 (two epochs without progress): x0.1.
  auto p = schedule(ScheduleKind::Plateau, 1, 10, 4);
  p.step_size = 1;
  p.gamma = 0.1;
  EXPECT_DOUBLE_EQ(learningRate(p, 12, {1, 0.5, 0.6}), 1);
  EXPECT_DOUBLE_EQ(learningRate(p, 16, {1, 0.5, 0.6, 0.7}), 0.1);
  // A loss within the relative threshold (1e-4) of the best is no progress.
  EXPECT_DOUBLE_EQ(learningRate(p, 16, {1, 0.5, 0.49999, 0.49999}), 0.1);
}

TEST(LearningRate, NamesMapToKinds) {
  EXPECT_EQ(scheduleNames(), (std::vector<std::string>{"step", "cosine", "onecycle", "plateau"}));
  EXPECT_EQ(scheduleKind("onecycle"), ScheduleKind::OneCycle);
  EXPECT_THROW(scheduleKind("poly"), std::invalid_argument);
}

TEST(LearningRate, FollowsPyTorchsSchedulersStepByStep) {
  const std::string path = test::tempPath("lr_schedules.txt");
  if (!test::runPythonReference("lr_schedules.py", path)) GEODL_REFERENCE_MISSING("python3-torch is not installed");
  std::map<std::string, std::vector<double>> reference;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    for (double v; words >> v;) reference[name].push_back(v);
  }
  std::remove(path.c_str());
  ASSERT_EQ(reference.size(), 4u);
  const auto compare = [&](const std::string& name, const Schedule& s, const std::vector<double>& losses,
                           int64_t per_epoch) {
    SCOPED_TRACE(name);
    const auto& rates = reference.at(name);
    for (size_t step = 0; step < rates.size(); ++step) {
      const std::vector<double> before(losses.begin(), losses.begin() + std::min(losses.size(), step / per_epoch));
      EXPECT_NEAR(learningRate(s, int64_t(step), before), rates[step], 1e-12 * 0.01) << "step " << step;
    }
  };
  compare("onecycle", schedule(ScheduleKind::OneCycle, 0.01, 50, 1), {}, 1);
  auto st = schedule(ScheduleKind::Step, 0.01, 6, 5);
  st.step_size = 2;
  st.gamma = 0.5;
  compare("step", st, {}, 5);
  auto pl = schedule(ScheduleKind::Plateau, 0.01, 10, 3);
  pl.step_size = 2;
  pl.gamma = 0.1;
  compare("plateau", pl, {1.0, 0.9, 0.95, 0.91, 0.9, 0.8, 0.85, 0.85, 0.85, 0.7}, 3);
  compare("cosine", schedule(ScheduleKind::Cosine, 0.01, 40, 1), {}, 1);
}

}  // namespace
}  // namespace geodl
