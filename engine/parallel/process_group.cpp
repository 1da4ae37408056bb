#include "parallel/process_group.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef GEODL_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "base/errors.h"
#include "core/device.h"
#include "core/torch_compat.h"

namespace geodl {

struct ProcessGroup::Impl {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<compat::CollectiveBackend> group;
  std::string backend;
  torch::Device device = torch::kCPU;  // where the group's own small tensors live
  std::chrono::milliseconds timeout;
  // A heartbeat through the store, once a second: when a collective fails, the ranks whose
  // beat stopped are the lost ones.
  std::thread heartbeat;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  ~Impl() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_all();
    if (heartbeat.joinable()) heartbeat.join();
  }
};

struct ProcessGroup::Pending::Impl {
  c10::intrusive_ptr<c10d::Work> work;
  const ProcessGroup* group = nullptr;
};

ProcessGroup::Pending::Pending() = default;
ProcessGroup::Pending::~Pending() = default;
ProcessGroup::Pending::Pending(Pending&&) noexcept = default;
ProcessGroup::Pending& ProcessGroup::Pending::operator=(Pending&&) noexcept = default;

void ProcessGroup::Pending::wait() {
  if (!impl_ || !impl_->work) return;
  try {
    impl_->work->wait();
  } catch (const std::exception& e) {
    impl_->group->lost("an all-reduce", e);
  }
  impl_->work.reset();
}

bool ncclAvailable() {
#ifdef GEODL_WITH_CUDA
  return true;
#else
  return false;
#endif
}

std::string ncclVersion() {
#ifdef GEODL_WITH_CUDA
  return c10d::getNcclVersion();
#else
  return "";
#endif
}

namespace {

// Until the store at host:port accepts connections (refused: not listening yet, tried again
// every 10 ms), or the deadline. c10d's TCPStore client waits a whole second after a refused
// connection: a rank started a moment before rank 0 listens would lose that second at every
// start. Anything but a refusal (an unknown host, no route, a silent host) is left to the
// store, which reports it.
void awaitListener(const std::string& host, int port, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || !found) return;
  const std::unique_ptr<addrinfo, void (*)(addrinfo*)> addresses(found, ::freeaddrinfo);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    bool refused = false;
    for (const addrinfo* a = found; a; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
      if (fd < 0) continue;
      int error = ::connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
      if (error == EINPROGRESS) {  // a second at most: a host that does not answer is the store's to report
        pollfd p{fd, POLLOUT, 0};
        socklen_t length = sizeof error;
        if (::poll(&p, 1, 1000) != 1 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) error = ETIMEDOUT;
      }
      ::close(fd);
      if (error != ECONNREFUSED) return;
      refused = true;
    }
    if (!refused) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Texts go through the store after a marker byte. LibTorch 1.13's store server sends a
// value's length with MSG_MORE and then its bytes: an empty value's length stays corked in
// the kernel for 200 ms before the rank waiting for it gets it.
std::vector<uint8_t> storedText(const std::string& text) {
  const std::string marked = "+" + text;
  return std::vector<uint8_t>(marked.begin(), marked.end());
}

std::string readText(const std::vector<uint8_t>& bytes) {
  return bytes.empty() ? std::string() : std::string(bytes.begin() + 1, bytes.end());
}

}  // namespace

std::string resolveBackend(const std::string& requested, const std::string& device) {
  const bool on_gpu = device.rfind("cuda", 0) == 0;
  if (requested.empty() || requested == "auto") return on_gpu && ncclAvailable() ? "nccl" : "gloo";
  if (requested == "gloo") return requested;
  if (requested != "nccl") throw InputError("unknown backend '" + requested + "'; use auto, nccl or gloo");
  if (!ncclAvailable())
    throw InputError("backend nccl needs GeoDL's CUDA build (scripts/install-deps.sh --cuda; scripts/build.sh "
                     "--cuda), and this one is built on a LibTorch without CUDA; use backend gloo (or auto)");
  if (!on_gpu)
    throw InputError("backend nccl joins GPUs, and this run computes on " + device +
                     "; use backend gloo (or auto) on CPUs, or device cuda");
  return requested;
}

ProcessGroup::ProcessGroup(const WorldInfo& world, std::chrono::milliseconds timeout,
                           std::function<std::string()> advice, const std::string& backend,
                           const std::string& device)
    : impl_(std::make_unique<Impl>()), world_(world), advice_(std::move(advice)) {
  impl_->timeout = timeout;
  impl_->backend = resolveBackend(backend, device);
  impl_->device = torch::Device(impl_->backend == "nccl" ? device : std::string("cpu"));
  const std::string where = world.master_addr + ":" + std::to_string(world.master_port);
  try {
    c10d::TCPStoreOptions o;
    o.port = uint16_t(world.master_port);
    o.isServer = world.rank == 0 && !world.agent_store;
    o.numWorkers = world.agent_store ? c10::nullopt : c10::optional<size_t>(size_t(world.size));
    o.waitWorkers = !world.agent_store;
    o.timeout = timeout;
    o.multiTenant = !world.agent_store;
    if (!o.isServer) awaitListener(world.master_addr, world.master_port, timeout);
    c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::TCPStore>(world.master_addr, o);
    if (!world.store_prefix.empty()) store = c10::make_intrusive<c10d::PrefixStore>(world.store_prefix, store);
    impl_->store = c10::make_intrusive<c10d::PrefixStore>("geodl", store);
    if (impl_->backend == "nccl") {
#ifdef GEODL_WITH_CUDA
      c10::cuda::set_device(impl_->device.index());  // NCCL's communicator binds to this rank's GPU
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      impl_->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(
          c10::make_intrusive<c10d::PrefixStore>("nccl", impl_->store), world.rank, world.size, options);
#endif
    } else {
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      const bool loopback = world.master_addr == "localhost" || world.master_addr.rfind("127.", 0) == 0;
      options->devices.push_back(loopback ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                          : c10d::ProcessGroupGloo::createDefaultDevice());
      options->threads = 1;
      impl_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(
          c10::make_intrusive<c10d::PrefixStore>("gloo", impl_->store), world.rank, world.size, options);
    }
    Impl* impl = impl_.get();
    const std::string key = "heartbeat/" + std::to_string(world.rank);
    impl_->heartbeat = std::thread([impl, key] {
      std::unique_lock<std::mutex> lock(impl->mutex);
      while (!impl->stopping) {
        try {
          impl->store->add(key, 1);
        } catch (...) {
          return;  // the store is gone: the collectives say so
        }
        impl->wake.wait_for(lock, std::chrono::seconds(1));
      }
    });
  } catch (const std::exception& e) {
    const std::string what = e.what();
    throw IoError("rank " + std::to_string(world.rank) + " of " + std::to_string(world.size) +
                  " cannot join the others through " + where + " within " + std::to_string(timeout.count() / 1000) +
                  " s (" + what.substr(0, what.find('\n')) +
                  "); check MASTER_ADDR and MASTER_PORT (a port in use, an unreachable host) and that every rank "
                  "was started");
  }
}

ProcessGroup::~ProcessGroup() = default;

// The ranks whose heartbeat stopped (read twice, 2.5 s apart), as text: "rank 1", "ranks 1, 3",
// or why it cannot be told.
std::string ProcessGroup::lostRanks() const {
  const auto beats = [&] {
    std::vector<int64_t> counts;
    for (int r = 0; r < world_.size; ++r) counts.push_back(impl_->store->add("heartbeat/" + std::to_string(r), 0));
    return counts;
  };
  try {
    const auto before = beats();
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    const auto after = beats();
    std::string lost;
    int count = 0;
    for (int r = 0; r < world_.size; ++r)
      if (r != world_.rank && after[size_t(r)] == before[size_t(r)]) {
        lost += (count++ ? ", " : "") + std::to_string(r);
      }
    if (count == 0) return "no rank stopped its heartbeat: one is hung or too slow";
    return (count == 1 ? "rank " : "ranks ") + lost + " stopped answering (died or hung)";
  } catch (...) {
    return world_.agent_store ? "the store of torchrun's agent cannot be reached"
                              : "rank 0, which hosts the store, cannot be reached (died?)";
  }
}

void ProcessGroup::lost(const std::string& what, const std::exception& e) const {
  const std::string text = e.what();
  throw IoError(what + " with the other ranks failed: " + lostRanks() + " (" + text.substr(0, text.find('\n')) +
                "; collective_timeout " + std::to_string(impl_->timeout.count() / 1000) +
                " s); " + (advice_ ? advice_() : std::string()));
}

ProcessGroup::Pending ProcessGroup::allreduceSumAsync(std::vector<torch::Tensor>& tensors) {
  Pending p;
  p.impl_ = std::make_unique<Pending::Impl>();
  p.impl_->group = this;
  try {
    p.impl_->work = impl_->group->allreduce(tensors);
  } catch (const std::exception& e) {
    lost("an all-reduce", e);
  }
  return p;
}

void ProcessGroup::allreduceSum(std::vector<torch::Tensor>& tensors) { allreduceSumAsync(tensors).wait(); }

void ProcessGroup::broadcast(std::vector<torch::Tensor>& tensors, int root) {
  try {
    c10d::BroadcastOptions o;
    o.rootRank = root;
    for (auto& t : tensors) {
      std::vector<torch::Tensor> one = {t};
      impl_->group->broadcast(one, o)->wait();
    }
  } catch (const std::exception& e) {
    lost("a broadcast", e);
  }
}

std::vector<std::string> ProcessGroup::allgatherText(const std::string& text) {
  const std::string round = "text/" + std::to_string(gathers_++) + "/";
  std::vector<std::string> all;
  try {
    impl_->store->set(round + std::to_string(world_.rank), storedText(text));
    for (int r = 0; r < world_.size; ++r) all.push_back(readText(impl_->store->get(round + std::to_string(r))));
  } catch (const std::exception& e) {
    lost("an exchange through the store", e);
  }
  return all;
}

bool ProcessGroup::any(bool flag) {
  std::vector<torch::Tensor> t = {torch::full({1}, flag ? 1 : 0, torch::dtype(torch::kInt64).device(impl_->device))};
  allreduceSum(t);
  return t[0].item<int64_t>() > 0;
}

int64_t ProcessGroup::minimum(int64_t value) {
  std::vector<torch::Tensor> t = {torch::full({1}, value, torch::dtype(torch::kInt64).device(impl_->device))};
  try {
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp::MIN;
    impl_->group->allreduce(t, o)->wait();
  } catch (const std::exception& e) {
    lost("an all-reduce", e);
  }
  return t[0].item<int64_t>();
}

int64_t ProcessGroup::broadcastValue(int64_t value, int root) {
  std::vector<torch::Tensor> t = {torch::full({1}, value, torch::dtype(torch::kInt64).device(impl_->device))};
  broadcast(t, root);
  return t[0].item<int64_t>();
}

int64_t ProcessGroup::add(const std::string& key, int64_t delta) {
  try {
    return impl_->store->add("job/" + key, delta);
  } catch (const std::exception& e) {
    lost("an exchange through the store", e);
  }
}

void ProcessGroup::setText(const std::string& key, const std::string& text) {
  try {
    impl_->store->set("job/" + key, storedText(text));
  } catch (const std::exception& e) {
    lost("an exchange through the store", e);
  }
}

std::string ProcessGroup::text(const std::string& key) {
  try {
    return readText(impl_->store->get("job/" + key));
  } catch (const std::exception& e) {
    lost("an exchange through the store", e);
  }
}

bool ProcessGroup::has(const std::string& key) {
  try {
    return impl_->store->check({"job/" + key});
  } catch (const std::exception& e) {
    lost("an exchange through the store", e);
  }
}

int64_t ProcessGroup::heartbeats(int r) {
  try {
    return impl_->store->add("heartbeat/" + std::to_string(r), 0);
  } catch (const std::exception& e) {
    lost("an exchange through the store", e);
  }
}

std::chrono::milliseconds ProcessGroup::timeout() const { return impl_->timeout; }

const std::string& ProcessGroup::backend() const { return impl_->backend; }

torch::Device ProcessGroup::device() const { return impl_->device; }

}  // namespace geodl
