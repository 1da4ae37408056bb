#include "app/data_parallel.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <thread>

#include "base/errors.h"
#include "core/exception_text.h"
#include "core/sync_batch_norm.h"
#include "parallel/gradient_reducer.h"
#include "parallel/process_group.h"

namespace geodl {

DataParallel::DataParallel(const WorldInfo& world, double timeout_seconds, std::function<std::string()> advice,
                           const std::string& backend, const std::string& device)
    : world_(world) {
  if (!world.distributed()) return;
  group_ = std::make_unique<ProcessGroup>(world, std::chrono::milliseconds(int64_t(timeout_seconds * 1000)),
                                          std::move(advice), backend, device);
}

std::string DataParallel::backend() const { return group_ ? group_->backend() : std::string(); }

DataParallel::~DataParallel() = default;

std::unique_ptr<BatchNormSyncScope> DataParallel::syncBatchNorm() {
  if (!group_) return nullptr;
  channel_sum_ = std::make_unique<GroupChannelSum>(*group_);
  return std::make_unique<BatchNormSyncScope>(channel_sum_.get());
}

void DataParallel::together(const std::function<void()>& stage) {
  if (!group_) return stage();
  std::exception_ptr mine;
  std::string text;
  try {
    stage();
  } catch (...) {
    mine = std::current_exception();
    text = describeCurrentException();
    if (text.empty()) text = "failed";
  }
  const std::vector<std::string> all = group_->allgatherText(text);
  if (mine) std::rethrow_exception(mine);
  for (size_t r = 0; r < all.size(); ++r)
    if (!all[r].empty()) throw InputError("rank " + std::to_string(r) + " stopped the run: " + all[r]);
}

void DataParallel::checkSameRun(const std::string& description, const std::string& what) {
  if (!group_) return;
  const std::vector<std::string> all = group_->allgatherText(description);
  const auto reference = nlohmann::json::parse(all[0]);
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r] == all[0]) continue;
    const auto other = nlohmann::json::parse(all[r]);
    std::string key = "the description", here = all[r], there = all[0];
    for (auto it = reference.begin(); it != reference.end(); ++it)
      if (!other.contains(it.key()) || other.at(it.key()) != it.value()) {
        key = it.key();
        here = other.contains(key) ? other.at(key).dump() : "absent";
        there = it.value().dump();
        break;
      }
    throw InputError("rank " + std::to_string(r) + " would " + what + " than rank 0: its " + key + " is " +
                     here.substr(0, 200) + ", rank 0's " + there.substr(0, 200) +
                     "; start every rank with the same config, stores and GeoDL version");
  }
}

int64_t DataParallel::rankZeroValue(int64_t value) { return group_ ? group_->broadcastValue(value) : value; }

int64_t DataParallel::minimum(int64_t value) { return group_ ? group_->minimum(value) : value; }

void DataParallel::broadcastModel(torch::nn::Module& model) {
  if (!group_) return;
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> state;
  for (const auto& p : model.parameters()) state.push_back(p);
  for (const auto& b : model.buffers()) state.push_back(b);
  group_->broadcast(state);
}

void DataParallel::broadcastBuffers(torch::nn::Module& model) {
  if (!group_) return;
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> buffers = model.buffers();
  group_->broadcast(buffers);
}

void DataParallel::attach(torch::nn::Module& model) {
  if (group_) reducer_ = std::make_unique<GradientReducer>(*group_, model.parameters());
}

void DataParallel::reduceGradients() {
  if (reducer_) reducer_->finish();
}

double DataParallel::reduceSeconds() const { return reducer_ ? reducer_->waitSeconds() : 0.0; }

void DataParallel::sum(std::vector<double>& values) {
  if (!group_ || values.empty()) return;
  std::vector<torch::Tensor> t = {torch::tensor(values, torch::TensorOptions().dtype(torch::kFloat64)).to(group_->device())};
  group_->allreduceSum(t);
  const torch::Tensor sums = t[0].cpu();
  std::copy(sums.data_ptr<double>(), sums.data_ptr<double>() + values.size(), values.begin());
}

void DataParallel::sum(std::vector<int64_t>& values) {
  if (!group_ || values.empty()) return;
  std::vector<torch::Tensor> t = {torch::tensor(values, torch::TensorOptions().dtype(torch::kInt64)).to(group_->device())};
  group_->allreduceSum(t);
  const torch::Tensor on_cpu = t[0].cpu();
  const auto* sums = on_cpu.data_ptr<int64_t>();
  std::copy(sums, sums + values.size(), values.begin());
}

bool DataParallel::anyCancelled(bool cancelled) { return group_ ? group_->any(cancelled) : cancelled; }

void DataParallel::checkSameWeights(const std::string& digest, int epoch) {
  if (!group_) return;
  const std::vector<std::string> all = group_->allgatherText(digest);
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      throw Error("after epoch " + std::to_string(epoch) + " rank " + std::to_string(r) + "'s weights (digest " +
                  all[r] + ") differ from rank 0's (" + all[0] +
                  "): the ranks diverged, which is a bug; the last checkpoint is rank 0's, report this with the log");
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kCheckEvery = std::chrono::milliseconds(200);
constexpr const char* kCancelled = "(cancelled)";

}  // namespace

void DataParallel::guarded(const std::function<void()>& work) {
  if (!group_) return work();
  try {
    work();
  } catch (const Cancelled&) {
    reportFailure("cancelled", true);
    throw;
  } catch (...) {
    const std::string text = describeCurrentException();
    reportFailure(text.empty() ? "failed" : text, false);
    throw;
  }
}

void DataParallel::reportFailure(const std::string& message, bool cancelled) noexcept {
  if (!group_) return;
  try {
    group_->setText("failure/" + std::to_string(world_.rank), cancelled ? kCancelled : message);
    group_->add("failures", 1);
  } catch (...) {
    // The store is gone with rank 0: the others find out by themselves.
  }
}

void DataParallel::checkOthers() {
  if (!group_) return;
  const auto now = Clock::now();
  if (now - checked_ < kCheckEvery) return;
  checked_ = now;
  if (group_->add("failures", 0) > 0) {
    for (int r = 0; r < world_.size; ++r) {
      const std::string key = "failure/" + std::to_string(r);
      if (r == world_.rank || !group_->has(key)) continue;
      const std::string text = group_->text(key);
      if (text == kCancelled) throw Cancelled("rank " + std::to_string(r) + " was cancelled: every rank stops");
      throw InputError("rank " + std::to_string(r) + " stopped the job: " + text);
    }
  }
  if (world_.rank == 0) watchHeartbeats();
}

// Rank 0 watches every rank's heartbeat once a second: one silent for the collective timeout
// died or hung, and every rank stops (rank 0's failure tells them).
void DataParallel::watchHeartbeats() {
  const auto now = Clock::now();
  if (now - watched_ < std::chrono::seconds(1)) return;
  watched_ = now;
  if (beats_.empty()) {
    beats_.assign(size_t(world_.size), -1);
    beat_changed_.assign(size_t(world_.size), now);
  }
  for (int r = 1; r < world_.size; ++r) {
    const int64_t beats = group_->heartbeats(r);
    if (beats != beats_[size_t(r)]) {
      beats_[size_t(r)] = beats;
      beat_changed_[size_t(r)] = now;
    } else if (now - beat_changed_[size_t(r)] > group_->timeout()) {
      throw IoError("rank " + std::to_string(r) + " stopped answering (died or hung) for " +
                    std::to_string(group_->timeout().count() / 1000) +
                    " s (collective_timeout): every rank stops and nothing is written; start the job again");
    }
  }
}

void DataParallel::awaitAll(const std::string& stage, const std::function<void()>& tick) {
  if (!group_) return;
  group_->add("stage/" + stage, 1);
  // Polled from 5 ms up to every kCheckEvery: ranks that arrive together go on together
  // (a stage of a short job, or the ranks' first meeting, waits milliseconds, not 200).
  auto pause = std::chrono::milliseconds(5);
  while (group_->add("stage/" + stage, 0) < world_.size) {
    checkOthers();
    if (tick) tick();
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::milliseconds>(pause * 2, kCheckEvery);
  }
  checked_ = {};
  checkOthers();
}

std::vector<std::string> DataParallel::gatherText(const std::string& text) {
  return group_ ? group_->allgatherText(text) : std::vector<std::string>{text};
}

int64_t DataParallel::addToCounter(const std::string& key, int64_t delta) {
  return group_ ? group_->add("counter/" + key, delta) : 0;
}

void DataParallel::barrier() {
  if (group_) group_->any(false);
}

RankProgress::RankProgress(Progress& parent, DataParallel& ranks, std::string counter, int64_t total, int64_t mine)
    : parent_(parent), ranks_(ranks), counter_(std::move(counter)), total_(std::max<int64_t>(1, total)),
      mine_(mine) {}

void RankProgress::publish(bool now) {
  if (!ranks_.active()) return;
  const auto t = Clock::now();
  if (!now && t - last_ < kCheckEvery) return;
  last_ = t;
  const int64_t all = ranks_.addToCounter(counter_, done_ - published_);
  published_ = done_;
  if (ranks_.rank() == 0)
    parent_.report(std::min(1.0, double(all) / double(total_)),
                   counter_.substr(0, counter_.find(':')) + " " + std::to_string(all) + "/" + std::to_string(total_) +
                       " on " + std::to_string(ranks_.size()) + " ranks");
}

void RankProgress::report(double fraction, const std::string& message) {
  if (!ranks_.active()) return parent_.report(fraction, message);
  done_ = std::max<int64_t>(done_, std::llround(std::clamp(fraction, 0.0, 1.0) * double(mine_)));
  if (ranks_.rank() != 0) parent_.report(fraction, message);
  publish(false);
}

bool RankProgress::cancelled() const {
  if (parent_.cancelled()) return true;
  ranks_.checkOthers();
  return false;
}

void RankProgress::showJob() {
  done_ = mine_;
  publish(done_ != published_);
}

const OptionTable<LaunchOptions>& launchOptionTable() {
  using O = LaunchOptions;
  static const OptionTable<O> table = {
      option("nproc", &O::nproc)
          .range(1, 1024).cli("nproc")
          .describe("", GEODL_TR("Run the job as N processes on this machine, each with cores / N threads: "
                                 "training data parallel, samples every N-th window each, classification "
                                 "bands of each raster (or whole rasters). torchrun and srun start the "
                                 "processes themselves instead.")),
  };
  return table;
}

}  // namespace geodl
