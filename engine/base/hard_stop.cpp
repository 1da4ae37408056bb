#include "base/hard_stop.h"

#include <time.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <vector>

namespace fs = std::filesystem;

namespace geodl::hard_stop {

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::string> temporaries, folders;
  std::vector<double> loops;  // the running LoopScopes' limits
  long long last_loop_end_ms = 0;
  std::vector<const std::function<std::string()>*> notes;
  std::recursive_mutex commits;  // held by CommitScopes, and for good by a hard stop
};

// Never destroyed: the watchdog thread may use it while the process exits.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

void eraseOne(std::vector<std::string>& v, const std::string& s) {
  const auto it = std::find(v.rbegin(), v.rend(), s);
  if (it != v.rend()) v.erase(std::next(it).base());
}

}  // namespace

long long monotonicMs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

void addTemporary(const std::string& path) {
  std::lock_guard lock(registry().mutex);
  registry().temporaries.push_back(path);
}
void dropTemporary(const std::string& path) {
  std::lock_guard lock(registry().mutex);
  eraseOne(registry().temporaries, path);
}
void addFolder(const std::string& path) {
  std::lock_guard lock(registry().mutex);
  registry().folders.push_back(path);
}
void dropFolder(const std::string& path) {
  std::lock_guard lock(registry().mutex);
  eraseOne(registry().folders, path);
}

CommitScope::CommitScope() { registry().commits.lock(); }
CommitScope::~CommitScope() { registry().commits.unlock(); }

LoopScope::LoopScope(double seconds) {
  std::lock_guard lock(registry().mutex);
  registry().loops.push_back(seconds);
}
LoopScope::~LoopScope() {
  std::lock_guard lock(registry().mutex);
  auto& r = registry();
  if (!r.loops.empty()) r.loops.pop_back();
  r.last_loop_end_ms = monotonicMs();
}

StopNote::StopNote(std::function<std::string()> note) {
  std::lock_guard lock(registry().mutex);
  registry().notes.push_back(new std::function<std::string()>(std::move(note)));
}
StopNote::~StopNote() {
  std::lock_guard lock(registry().mutex);
  auto& notes = registry().notes;
  if (!notes.empty()) {
    delete notes.back();
    notes.pop_back();
  }
}

long long deadlineMs(long long signal_ms) {
  std::lock_guard lock(registry().mutex);
  const auto& r = registry();
  if (!r.loops.empty())
    return signal_ms + std::max(kGraceMs, static_cast<long long>(1000 * *std::max_element(r.loops.begin(), r.loops.end())));
  return std::max(signal_ms, r.last_loop_end_ms) + kGraceMs;
}

std::string removeForHardStop() {
  auto& r = registry();
  r.commits.lock();  // never released: the process ends
  std::lock_guard lock(r.mutex);
  for (const std::string& temporary : r.temporaries) {
    const fs::path path(temporary);
    const std::string prefix = path.filename().string();
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(path.parent_path(), ec)) {
      const std::string name = entry.path().filename().string();
      if (name.compare(0, prefix.size(), prefix) == 0) fs::remove_all(entry.path(), ec);  // a staging folder too
    }
  }
  for (auto it = r.folders.rbegin(); it != r.folders.rend(); ++it) {
    std::error_code ignored;
    fs::remove(*it, ignored);  // only when empty
  }
  std::string note;
  if (!r.notes.empty()) {
    try {
      note = (*r.notes.back())();
    } catch (...) {
    }
  }
  return note;
}

}  // namespace geodl::hard_stop
