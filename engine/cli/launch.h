// `geodl train --nproc N`: the simple way to train with N processes on one machine. This
// process becomes the launcher: it finds a free loopback port for the store, starts N
// copies of the same command as ranks 0..N-1 (torchrun's variables in their environment),
// forwards Ctrl-C and SIGTERM to them, stops the others when one fails, and returns the
// first failure's exit code (else kExitSkipped when a rank ended with it, else 0).
#pragma once

#include <string>
#include <vector>

namespace geodl::cli {

// The exit code of a job that finished but left some of its inputs out (classify's on_error
// skip): a rank ending with it has not failed; the launcher returns it when no rank failed.
constexpr int kExitSkipped = 6;

// `arguments`: the command line without the program and without --nproc.
int launchLocalRanks(const std::vector<std::string>& arguments, int nproc);

// A free TCP port on the loopback interface (0 when none could be found).
int freeLoopbackPort();

}  // namespace geodl::cli
