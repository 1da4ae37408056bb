#include "cli/progress_bar.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>

namespace geodl::cli {

namespace {
std::atomic<int> g_interrupts{0};
std::atomic<long long> g_first_ms{0};

long long monotonicMs() {  // async-signal-safe
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

// The first Ctrl-C, SIGTERM (what schedulers, systemd and `timeout` send) or SIGHUP (the
// terminal closed) asks the job to stop at its next batch; a second one kills. Signals
// within 200 ms of the first are the same one delivered twice (`timeout` signals the
// process and then its group; a terminal's Ctrl-C reaches the whole group): they count once.
void onInterrupt(int signal) {
  const long long now = monotonicMs();
  if (g_interrupts.fetch_add(1) == 0) {
    g_first_ms.store(now);
    return;
  }
  if (now - g_first_ms.load() < 200) return;
  std::signal(signal, SIG_DFL);
  std::raise(signal);
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
