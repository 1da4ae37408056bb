#include "cli/progress_bar.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

#include "base/hard_stop.h"

namespace geodl::cli {

namespace {
std::atomic<int> g_interrupts{0};
std::atomic<long long> g_first_ms{0};
std::atomic<bool> g_stop_now{false};
int g_wake[2] = {-1, -1};  // the handler wakes the watchdog through this pipe

void wakeWatchdog() {  // async-signal-safe
  const char byte = 1;
  if (g_wake[1] >= 0) (void)!::write(g_wake[1], &byte, 1);
}

// The first Ctrl-C, SIGTERM (what schedulers, systemd and `timeout` send) or SIGHUP (the
// terminal closed) asks the job to stop at its next batch; a second one stops it now. Signals
// within 200 ms of the first are the same one delivered twice (`timeout` signals the
// process and then its group; a terminal's Ctrl-C reaches the whole group): they count once.
void onInterrupt(int) {
  const long long now = hard_stop::monotonicMs();  // clock_gettime: async-signal-safe
  if (g_interrupts.fetch_add(1) == 0) {
    g_first_ms.store(now);
    wakeWatchdog();
    return;
  }
  if (now - g_first_ms.load() < 200) return;
  g_stop_now.store(true);
  wakeWatchdog();
}

// Ends the process where the job could not stop by itself: its temporaries and the empty
// folders it made go, outputs being moved into place are moved first (base/hard_stop.h).
[[noreturn]] void stopNow(bool second_signal) {
  const std::string note = hard_stop::removeForHardStop();
  char after[32];
  std::snprintf(after, sizeof after, "%.1f s", double(hard_stop::monotonicMs() - g_first_ms.load()) / 1000.0);
  const std::string text =
      "\ngeodl: " +
      (!note.empty() ? note
       : second_signal
           ? std::string("stopped at the second signal; what the job was writing was removed")
           : "cancelled: stopped " + std::string(after) + " after the signal, where the job could not stop by itself "
             "(opening or reading a file, loading its model, or in a step that had not ended); what it was writing "
             "was removed") +
      "\n";
  (void)!::write(STDERR_FILENO, text.data(), text.size());
  ::_exit(5);  // the exit code of a cancelled job
}

// After the first signal, the job has until hard_stop::deadlineMs() to stop by itself: a
// second inside its loops (which check at every step; longer for a step that runs), one
// outside them (a config being read, a file opened, a model loaded, a library blocked on a
// file). Then, or at a second signal, the watchdog ends it.
void watchdog() {
  for (;;) {
    pollfd wake{g_wake[0], POLLIN, 0};
    ::poll(&wake, 1, g_interrupts.load() > 0 ? 20 : -1);
    char drained[64];
    while (::read(g_wake[0], drained, sizeof drained) > 0) {
    }
    if (g_interrupts.load() == 0) continue;
    if (g_stop_now.load()) stopNow(true);
    if (hard_stop::monotonicMs() >= hard_stop::deadlineMs(g_first_ms.load())) stopNow(false);
  }
}

std::string formatDuration(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char buffer[32];
  if (s >= 3600)
    std::snprintf(buffer, sizeof buffer, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buffer, sizeof buffer, "%ld:%02ld", s / 60, s % 60);
  return buffer;
}
}  // namespace

void installInterruptHandler() {
  if (::pipe2(g_wake, O_NONBLOCK | O_CLOEXEC) == 0) std::thread(watchdog).detach();
  std::signal(SIGINT, onInterrupt);
  std::signal(SIGTERM, onInterrupt);
  // SIGHUP only where it is not ignored: under nohup the job outlives its terminal.
  struct sigaction hup {};
  if (sigaction(SIGHUP, nullptr, &hup) == 0 && hup.sa_handler != SIG_IGN) std::signal(SIGHUP, onInterrupt);
  // Past `ulimit -f` a write fails with EFBIG, which names the limit, instead of the process
  // being killed by SIGXFSZ with nothing said and the temporaries left.
  std::signal(SIGXFSZ, SIG_IGN);
}

ProgressBar::ProgressBar(bool quiet, int rank)
    : quiet_(quiet || rank > 0 || !isatty(STDERR_FILENO)), rank_(rank), start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() { clearLine(); }

bool ProgressBar::cancelled() const { return g_interrupts.load() > 0; }

void ProgressBar::clearLine() {
  if (drawn_) {
    std::cerr << "\r\033[K" << std::flush;
    drawn_ = false;
  }
}

void ProgressBar::log(const std::string& message) {
  clearLine();
  // The engine's warnings go where the CLI's own do; the other ranks say only those.
  const bool warning = message.rfind("warning: ", 0) == 0;
  if (rank_ > 0 && !warning) return;
  if (warning) std::cerr << "geodl: " << (rank_ > 0 ? "rank " + std::to_string(rank_) + ": " : "") << message << std::endl;
  else std::cout << message << std::endl;
}

void ProgressBar::report(double fraction, const std::string& message) {
  if (quiet_) return;
  const auto now = std::chrono::steady_clock::now();
  // Throttle: at most ten redraws a second, but always draw the end.
  if (drawn_ && fraction < 1.0 && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const int width = 30;
  const int filled = static_cast<int>(fraction * width + 0.5);
  std::string bar(filled, '#');
  bar.resize(width, '.');
  std::string eta = "--:--";
  if (fraction > 0.01) eta = formatDuration(elapsed * (1.0 - fraction) / fraction);
  char percent[16];
  std::snprintf(percent, sizeof percent, "%3d%%", static_cast<int>(fraction * 100 + 0.5));
  std::cerr << "\r\033[K[" << bar << "] " << percent << " ETA " << eta << "  " << message
            << std::flush;
  drawn_ = true;
}

}  // namespace geodl::cli
