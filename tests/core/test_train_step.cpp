// A training step that runs out of memory is computed again in parts (trainStepFitting): the
// CPU's memory budget fails the way a GPU's out-of-memory does, so the retry is checked here
// on the CPU, exactly, against the same step asked for in parts. And float16's loss scaling,
// whose arithmetic is the same on every device.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <vector>

#include "core/grad_scaler.h"
#include "core/memory.h"
#include "core/train_step.h"
#include "core/test_support.h"

namespace geodl {
namespace {

struct StepSetup {
  SegmentationModel model;
  std::unique_ptr<torch::optim::Adam> optimizer;
  Batch batch;
};

StepSetup makeStepSetup() {
  torch::manual_seed(7);
  StepSetup s{test::modelNamed("unetsmall", 3, 2), nullptr, {}};
  s.optimizer = std::make_unique<torch::optim::Adam>(s.model->parameters(), torch::optim::AdamOptions(1e-3));
  s.batch.images = torch::randn({8, 3, 64, 64});
  s.batch.labels = torch::randint(0, 2, {8, 64, 64}, torch::kLong);
  return s;
}

// The peak of a second step (the first allocates Adam's state), as the budgeted step below.
size_t stepPeakBytes(int parts) {
  StepSetup s = makeStepSetup();
  StepOptions o;
  trainStep(*s.model, *s.optimizer, s.batch, o);
  MemoryMeter meter("cpu");
  meter.start();
  o.parts = parts;
  trainStep(*s.model, *s.optimizer, s.batch, o);
  return meter.peak();
}

TEST(TrainStepFitting, OutOfMemoryRetriesTheBatchInPartsAndKeepsThemAfter) {
  installCountingCpuAllocator();
  const size_t whole = stepPeakBytes(1), in_four = stepPeakBytes(4);
  ASSERT_LT(in_four, whole) << "four parts must need less memory than the whole batch";

  // A budget between the two: the whole batch does not fit, four parts do.
  StepSetup fitting = makeStepSetup();
  std::vector<int> splits;
  StepOptions o;
  {
    trainStep(*fitting.model, *fitting.optimizer, fitting.batch, o);
    MemoryMeter meter("cpu");
    meter.start();
    meter.setBudget((whole + in_four) / 2);
    const double loss = trainStepFitting(*fitting.model, *fitting.optimizer, fitting.batch, o,
                                         [&](int parts) { splits.push_back(parts); });
    meter.setBudget(0);
    EXPECT_TRUE(std::isfinite(loss));
  }
  ASSERT_FALSE(splits.empty()) << "the step must have run out of memory and been split";
  EXPECT_EQ(splits.front(), 2);
  EXPECT_EQ(o.parts, splits.back());  // kept for the batches after
  EXPECT_LE(o.parts, 4);

  // The same two steps, the second asked for in o.parts parts from the start, without a
  // budget: the same weights, bit for bit (the failed attempt changed no parameter; batch norm
  // running statistics do take its forward pass, which training-mode steps do not read).
  StepSetup reference = makeStepSetup();
  StepOptions plain;
  trainStep(*reference.model, *reference.optimizer, reference.batch, plain);
  StepOptions in_parts;
  in_parts.parts = o.parts;
  trainStep(*reference.model, *reference.optimizer, reference.batch, in_parts);
  const auto a = fitting.model->parameters(), b = reference.model->parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
}

TEST(TrainStepFitting, ABatchThatCannotBeSplitFurtherGivesTheError) {
  installCountingCpuAllocator();
  StepSetup s = makeStepSetup();
  StepOptions o;
  o.may_split = false;  // several ranks
  MemoryMeter meter("cpu");
  meter.start();
  meter.setBudget(1 << 20);
  EXPECT_THROW(trainStepFitting(*s.model, *s.optimizer, s.batch, o, {}), c10::OutOfMemoryError);
  meter.setBudget(0);
  EXPECT_EQ(o.parts, 1);
}

// Loss scaling (float16 autocast's): the same step as without it, bit for bit, when the
// gradients are finite (the scale is a power of two); a step with an inf gradient changes no
// weight and halves the scale; finite steps double it after the growth interval.
TEST(GradScaler, ScaledStepsGiveThePlainStepsWeights) {
  StepSetup plain = makeStepSetup(), scaled = makeStepSetup();
  StepOptions o;
  GradScaler scaler(65536.0, 2);
  StepOptions s;
  s.scaler = &scaler;
  for (int i = 0; i < 3; ++i) {
    const double a = trainStep(*plain.model, *plain.optimizer, plain.batch, o);
    const double b = trainStep(*scaled.model, *scaled.optimizer, scaled.batch, s);
    EXPECT_EQ(a, b) << "the loss is given unscaled";
  }
  EXPECT_EQ(scaler.skippedSteps(), 0);
  EXPECT_EQ(scaler.scale(), 131072.0);  // doubled once, after 2 finite steps
  const auto a = plain.model->parameters(), b = scaled.model->parameters();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "parameter " << i;
}

TEST(GradScaler, AStepWithAnInfiniteGradientIsSkippedAndHalvesTheScale) {
  StepSetup s = makeStepSetup();
  GradScaler scaler(1024.0);
  StepOptions o;
  o.scaler = &scaler;
  trainStep(*s.model, *s.optimizer, s.batch, o);  // Adam's state exists from here
  std::vector<torch::Tensor> before;
  for (const auto& p : s.model->parameters()) before.push_back(p.detach().clone());
  o.after_backward = [](torch::nn::Module& m) { m.parameters()[0].grad().view(-1)[0] = INFINITY; };
  const double loss = trainStep(*s.model, *s.optimizer, s.batch, o);
  EXPECT_TRUE(std::isfinite(loss));
  EXPECT_EQ(scaler.skippedSteps(), 1);
  EXPECT_EQ(scaler.scale(), 512.0);
  const auto after = s.model->parameters();
  for (size_t i = 0; i < after.size(); ++i) EXPECT_TRUE(torch::equal(after[i], before[i])) << "parameter " << i;
}

}  // namespace
}  // namespace geodl
