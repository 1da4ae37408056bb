#include "app/data_parallel.h"

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "core/exception_text.h"
#include "core/sync_batch_norm.h"
#include "dist/gradient_reducer.h"
#include "dist/process_group.h"

namespace geodl {

DataParallel::DataParallel(const WorldInfo& world, double timeout_seconds) : world_(world) {
  if (!world.distributed()) return;
  group_ = std::make_unique<ProcessGroup>(world, std::chrono::milliseconds(int64_t(timeout_seconds * 1000)));
}

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

void DataParallel::checkSameRun(const std::string& description) {
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
    throw InputError("rank " + std::to_string(r) + " would train another run than rank 0: its " + key + " is " +
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
  std::vector<torch::Tensor> t = {torch::tensor(values, torch::TensorOptions().dtype(torch::kFloat64))};
  group_->allreduceSum(t);
  for (size_t i = 0; i < values.size(); ++i) values[i] = t[0][int64_t(i)].item<double>();
}

void DataParallel::sum(std::vector<int64_t>& values) {
  if (!group_ || values.empty()) return;
  std::vector<torch::Tensor> t = {torch::tensor(values, torch::TensorOptions().dtype(torch::kInt64))};
  group_->allreduceSum(t);
  const auto* sums = t[0].data_ptr<int64_t>();
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

}  // namespace geodl
