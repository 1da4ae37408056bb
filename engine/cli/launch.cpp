#include "cli/launch.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <thread>

#include "base/errors.h"
#include "base/hard_stop.h"
#include "cli/progress_bar.h"

namespace geodl::cli {

int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
    port = ntohs(address.sin_port);
  ::close(fd);
  return port;
}

namespace {

int exitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int launchLocalRanks(const std::vector<std::string>& arguments, int nproc) {
  const int port = freeLoopbackPort();
  if (port == 0) throw IoError("no free port on the loopback interface for the ranks' store");
  std::vector<pid_t> children;
  for (int rank = 0; rank < nproc; ++rank) {
    const pid_t pid = ::fork();
    if (pid < 0) throw IoError(std::string("cannot start rank ") + std::to_string(rank) + ": " + std::strerror(errno));
    if (pid == 0) {
      const std::string r = std::to_string(rank), n = std::to_string(nproc), p = std::to_string(port);
      ::setenv("RANK", r.c_str(), 1);
      ::setenv("LOCAL_RANK", r.c_str(), 1);
      ::setenv("WORLD_SIZE", n.c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", n.c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", p.c_str(), 1);
      ::setenv("GEODL_LAUNCHER", "geodl --nproc", 1);
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::signal(SIGHUP, SIG_DFL);
      // A group of its own: a terminal's Ctrl-C reaches the launcher alone, which passes it
      // on once (a second signal would kill a rank outright).
      ::setpgid(0, 0);
      std::vector<char*> argv;
      static const std::string self = "geodl";
      argv.push_back(const_cast<char*>(self.c_str()));
      for (const auto& a : arguments) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv("/proc/self/exe", argv.data());
      std::cerr << "geodl: cannot start rank " << rank << ": " << std::strerror(errno) << std::endl;
      ::_exit(127);
    }
    children.push_back(pid);
  }
  // Wait for all; forward a stop; when one fails, stop the others.
  std::vector<int> codes(size_t(nproc), -1);
  int running = nproc, first_failure = 0, failed_rank = -1;
  bool skipped = false;
  bool forwarded = false;
  ProgressBar watch(true);  // its interrupt flag: Ctrl-C or SIGTERM on the launcher
  const hard_stop::LoopScope loop(30);  // the ranks stop within 2 s of the signal passed to them
  while (running > 0) {
    for (int rank = 0; rank < nproc; ++rank) {
      if (codes[size_t(rank)] >= 0) continue;
      int status = 0;
      if (::waitpid(children[size_t(rank)], &status, WNOHANG) != children[size_t(rank)]) continue;
      codes[size_t(rank)] = exitCode(status);
      --running;
      skipped = skipped || codes[size_t(rank)] == kExitSkipped;
      if (codes[size_t(rank)] != 0 && codes[size_t(rank)] != kExitSkipped && failed_rank < 0) {
        failed_rank = rank;
        first_failure = codes[size_t(rank)];
      }
    }
    if (running > 0 && !forwarded && (watch.cancelled() || failed_rank >= 0)) {
      forwarded = true;
      for (int rank = 0; rank < nproc; ++rank)
        if (codes[size_t(rank)] < 0) ::kill(children[size_t(rank)], SIGTERM);
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (failed_rank >= 0 && !watch.cancelled())
    std::cerr << "geodl: rank " << failed_rank << " of " << nproc << " failed (exit code " << first_failure
              << "); the others were stopped" << std::endl;
  return failed_rank >= 0 ? first_failure : skipped ? kExitSkipped : 0;
}

}  // namespace geodl::cli
