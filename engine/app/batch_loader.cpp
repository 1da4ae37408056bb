#include "app/batch_loader.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "base/errors.h"
#include "io/sample_store.h"

namespace geodl {

namespace {

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t mix(uint64_t seed, uint64_t epoch, uint64_t index) {
  return splitmix(splitmix(splitmix(seed) ^ epoch) ^ index);
}

}  // namespace

struct BatchLoader::Impl {
  LoaderOptions options;
  int sample_size = 0, bands = 0;
  std::vector<std::thread> workers;
  std::mutex mutex;
  std::condition_variable work, ready_cv;
  bool stop = false;
  uint64_t generation = 0;
  int epoch = 0;
  std::vector<std::vector<int64_t>> plan;  // this epoch's batches, as sample indices
  size_t next_to_build = 0, next_to_use = 0;
  std::map<size_t, Batch> ready;
  std::exception_ptr error;

  void run() {
    std::unique_ptr<io::SampleStoreReader> reader;
    std::vector<float> image;
    std::vector<uint8_t> labels;
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      work.wait(lock, [&] {
        return stop || (!error && next_to_build < plan.size() &&
                        next_to_build < next_to_use + size_t(options.prefetch));
      });
      if (stop) return;
      const size_t k = next_to_build++;
      const uint64_t gen = generation;
      const std::vector<int64_t> indices = plan[k];
      const int ep = epoch;
      lock.unlock();
      Batch batch;
      std::exception_ptr failure;
      try {
        if (!reader) reader = std::make_unique<io::SampleStoreReader>(options.store);
        batch = build(*reader, indices, ep, image, labels);
      } catch (...) {
        failure = std::current_exception();
      }
      lock.lock();
      if (gen != generation) continue;  // an epoch restarted meanwhile
      if (failure)
        error = failure;
      else
        ready.emplace(k, std::move(batch));
      ready_cv.notify_all();
    }
  }

  Batch build(io::SampleStoreReader& reader, const std::vector<int64_t>& indices, int ep,
              std::vector<float>& image, std::vector<uint8_t>& labels) const {
    const int64_t n = int64_t(indices.size()), s = sample_size;
    auto pinned = torch::TensorOptions().pinned_memory(options.pin_memory);
    Batch batch{torch::empty({n, bands, s, s}, pinned.dtype(torch::kFloat)),
                torch::empty({n, s, s}, pinned.dtype(torch::kLong))};
    image.resize(size_t(s * s * bands));
    labels.resize(size_t(s * s));
    float* out_image = batch.images.data_ptr<float>();
    int64_t* out_labels = batch.labels.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      const int64_t index = indices[size_t(i)];
      reader.read(index, image.data(), labels.data());
      for (uint8_t v : labels)
        if (v >= options.num_classes && v != options.ignore_index)
          throw InputError("sample " + std::to_string(index) + " of '" + options.store +
                           "' has pixels of class " + std::to_string(v) + " but the model has " +
                           std::to_string(options.num_classes) +
                           " classes: set num_classes to at least " + std::to_string(v + 1));
      std::mt19937_64 rng(mix(options.seed, uint64_t(ep), uint64_t(index)));
      prepareSample(image.data(), labels.data(), sample_size, bands, options.mean.data(),
                    options.std.data(), options.augmentation, rng, options.ignore_index,
                    out_image + i * bands * s * s, out_labels + i * s * s);
    }
    return batch;
  }
};

BatchLoader::BatchLoader(const LoaderOptions& options) : impl_(std::make_unique<Impl>()) {
  auto& d = *impl_;
  d.options = options;
  if (options.batch_size < 1) throw InputError("the batch size must be at least 1");
  if (options.world_size < 1 || options.rank < 0 || options.rank >= options.world_size)
    throw InputError("the rank must be in [0, world size)");
  {
    io::SampleStoreReader reader(options.store);
    d.sample_size = reader.sampleSize();
    d.bands = reader.bands();
    if (options.samples > reader.size())
      throw InputError("'" + options.store + "' has " + std::to_string(reader.size()) +
                       " samples, fewer than the " + std::to_string(options.samples) + " asked for");
  }
  if (int(options.mean.size()) != d.bands || int(options.std.size()) != d.bands)
    throw InputError("the normalization has " + std::to_string(options.mean.size()) +
                     " values for a store of " + std::to_string(d.bands) + " bands");
  const int threads = std::max(1, options.threads);
  for (int t = 0; t < threads; ++t) d.workers.emplace_back([this] { impl_->run(); });
}

BatchLoader::~BatchLoader() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stop = true;
  }
  impl_->work.notify_all();
  for (auto& t : impl_->workers) t.join();
}

namespace {

// Whether the epoch's last batch holds a single sample that drop_single leaves out.
bool dropsLastBatch(const LoaderOptions& o) {
  return o.drop_single && o.batch_size > 1 && o.samples > o.batch_size && o.samples % o.batch_size == 1;
}

// The epoch's batches, before they are shared among ranks.
int64_t totalBatches(const LoaderOptions& o) {
  return (o.samples + o.batch_size - 1) / o.batch_size - (dropsLastBatch(o) ? 1 : 0);
}

}  // namespace

bool BatchLoader::leavesOutASample() const { return dropsLastBatch(impl_->options); }

int64_t BatchLoader::batchesPerEpoch() const {
  const auto& o = impl_->options;
  const int64_t total = totalBatches(o);
  if (o.equal_shares) return total / o.world_size;
  return total / o.world_size + (o.rank < total % o.world_size ? 1 : 0);
}

void BatchLoader::startEpoch(int epoch) {
  auto& d = *impl_;
  const auto& o = d.options;
  std::vector<int64_t> order(size_t(o.samples));
  std::iota(order.begin(), order.end(), 0);
  if (o.shuffle) {
    std::mt19937_64 rng(mix(o.seed, uint64_t(epoch), ~0ull));
    // Fisher-Yates with our own draws: the same order on every platform.
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  }
  std::vector<std::vector<int64_t>> plan;
  int64_t b = 0;
  const int64_t last = o.equal_shares ? batchesPerEpoch() * o.world_size : totalBatches(o);
  for (size_t start = 0; start < order.size() && b < last; start += size_t(o.batch_size), ++b) {
    if (b % o.world_size != o.rank) continue;
    const size_t end = std::min(order.size(), start + size_t(o.batch_size));
    plan.emplace_back(order.begin() + long(start), order.begin() + long(end));
  }
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    ++d.generation;
    d.epoch = epoch;
    d.plan = std::move(plan);
    d.ready.clear();
    d.error = nullptr;
    d.next_to_build = d.next_to_use = 0;
  }
  d.work.notify_all();
}

bool BatchLoader::next(Batch& batch, double* waited) {
  auto& d = *impl_;
  std::unique_lock<std::mutex> lock(d.mutex);
  if (d.next_to_use >= d.plan.size()) return false;
  const auto start = std::chrono::steady_clock::now();
  d.ready_cv.wait(lock, [&] { return d.error || d.ready.count(d.next_to_use); });
  if (waited)
    *waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (d.error) std::rethrow_exception(d.error);
  auto it = d.ready.find(d.next_to_use);
  batch = std::move(it->second);
  d.ready.erase(it);
  ++d.next_to_use;
  lock.unlock();
  d.work.notify_all();
  return true;
}

}  // namespace geodl
