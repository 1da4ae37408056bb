#include <gtest/gtest.h>

#include "core/batch_probe.h"
#include "base/errors.h"

namespace geodl {
namespace {

BatchProbeOptions small(bool checkpoint) {
  BatchProbeOptions o;
  o.model = "unetsmall";
  o.sample_size = 32;
  o.bands = 3;
  o.classes = 4;
  o.budget_mib = 80;
  o.checkpoint = checkpoint;
  o.device = "cpu";
  o.threads = 1;  // one thread: the core tests run two at a time (scripts/test.sh)
  return o;
}

TEST(BatchProbe, PredictionIsConfirmedAndTheNextBatchesDoNotFit) {
  NullProgress progress;
  const auto o = small(false);
  const auto r = probeMaxBatch(o, progress);
  ASSERT_TRUE(r.confirmed);
  ASSERT_GE(r.max_batch, 2);
  ASSERT_GE(r.measurements.size(), 2u);
  const double budget = o.budget_mib * 1024 * 1024;
  const auto at_max = measureTrainingStep(o, r.max_batch, 1, progress);
  EXPECT_LE(at_max.peak_bytes, budget);
  // Memory is affine in the batch: the line through two batches predicts a third.
  const double predicted = r.fixed_bytes + r.bytes_per_sample * r.max_batch;
  EXPECT_NEAR(at_max.peak_bytes / predicted, 1.0, 0.03);
  const int beyond = r.max_batch + 1 + r.max_batch / 20;
  EXPECT_GT(measureTrainingStep(o, beyond, 1, progress).peak_bytes, budget);
}

TEST(BatchProbe, CheckpointingFitsALargerBatch) {
  // Without checkpointing, training already keeps only the UNet's conv outputs; recomputing
  // whole blocks still fits 1.4 times the batch at least (1.6 measured).
  NullProgress progress;
  const auto plain = probeMaxBatch(small(false), progress);
  const auto ck = probeMaxBatch(small(true), progress);
  EXPECT_GE(10 * ck.max_batch, 14 * plain.max_batch) << ck.max_batch << " against " << plain.max_batch;
}

TEST(BatchProbe, NothingFitsATinyBudget) {
  NullProgress progress;
  auto o = small(false);
  o.budget_mib = 1;
  EXPECT_EQ(probeMaxBatch(o, progress).max_batch, 0);
}

TEST(BatchProbe, BadOptionsAreRefused) {
  NullProgress progress;
  auto o = small(false);
  o.model = "nope";
  EXPECT_THROW(probeMaxBatch(o, progress), InputError);
  o = small(false);
  o.budget_mib = 0;
  EXPECT_THROW(probeMaxBatch(o, progress), InputError);
  o = small(false);
  o.device = "tpu";
  EXPECT_THROW(probeMaxBatch(o, progress), InputError);
}

struct CancelAfter final : Progress {
  explicit CancelAfter(int n) : left(n) {}
  void report(double, const std::string&) override { --left; }
  bool cancelled() const override { return left <= 0; }
  int left;
};

TEST(BatchProbe, CancelStopsTheProbe) {
  CancelAfter progress(1);
  EXPECT_THROW(probeMaxBatch(small(false), progress), Cancelled);
}

}  // namespace
}  // namespace geodl
