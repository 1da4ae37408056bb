#include "parallel/world.h"

#include <cstdlib>

#include "base/errors.h"

namespace geodl {

namespace {

// An integer variable: `fallback` when unset; InputError naming it when malformed.
int intVariable(const std::function<const char*(const char*)>& get, const char* name, int fallback) {
  const char* text = get(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > 1000000)
    throw InputError(std::string("the environment variable ") + name + " is '" + text +
                     "', not a whole number from 0 to 1000000; check how the job is launched");
  return int(value);
}

std::string textVariable(const std::function<const char*(const char*)>& get, const char* name) {
  const char* text = get(name);
  return text ? text : "";
}

}  // namespace

std::string firstSlurmHost(const std::string& nodelist) {
  // The first entry: up to a comma outside brackets.
  std::string first;
  int depth = 0;
  for (char c : nodelist) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) break;
    first += c;
  }
  const size_t open = first.find('[');
  if (open == std::string::npos) return first;
  // prefix[03-05,09]: the first number of the range, zero padding kept.
  std::string range = first.substr(open + 1);
  const size_t stop = range.find_first_of("-,]");
  return first.substr(0, open) + range.substr(0, stop);
}

WorldInfo worldFromEnvironment(const std::function<const char*(const char*)>& getenv_) {
  const auto get = getenv_ ? getenv_ : [](const char* name) -> const char* { return std::getenv(name); };
  WorldInfo w;
  const bool torchrun = get("WORLD_SIZE") != nullptr;
  const bool slurm = !torchrun && get("SLURM_NTASKS") != nullptr && get("SLURM_PROCID") != nullptr;
  if (!torchrun && !slurm) return w;
  const char* rank_name = torchrun ? "RANK" : "SLURM_PROCID";
  const char* size_name = torchrun ? "WORLD_SIZE" : "SLURM_NTASKS";
  w.size = intVariable(get, size_name, 1);
  w.rank = intVariable(get, rank_name, 0);
  if (w.size < 1)
    throw InputError(std::string(size_name) + " is 0: a job needs at least one process; launch it with "
                     "--nproc_per_node 1 or more");
  if (w.rank >= w.size)
    throw InputError(std::string(rank_name) + " is " + std::to_string(w.rank) + " but " + size_name + " is " +
                     std::to_string(w.size) + ": ranks go from 0 to " + std::to_string(w.size - 1) +
                     "; check the launcher's variables");
  if (torchrun) {
    w.launcher = get("TORCHELASTIC_RUN_ID") ? "torchrun" : textVariable(get, "GEODL_LAUNCHER");
    if (w.launcher.empty()) w.launcher = "environment (RANK, WORLD_SIZE)";
    w.local_rank = intVariable(get, "LOCAL_RANK", w.rank);
    w.local_size = intVariable(get, "LOCAL_WORLD_SIZE", w.size);
    if (const char* addr = get("MASTER_ADDR"); addr && *addr) w.master_addr = addr;
    w.agent_store = textVariable(get, "TORCHELASTIC_USE_AGENT_STORE") == "True";
    if (w.agent_store) w.store_prefix = "/worker/attempt_" + std::to_string(intVariable(get, "TORCHELASTIC_RESTART_COUNT", 0));
  } else {
    w.launcher = "srun";
    w.local_rank = intVariable(get, "SLURM_LOCALID", 0);
    // SLURM_NTASKS_PER_NODE may read "2(x3)"; the tasks of this node are what count.
    w.local_size = std::max(1, std::atoi(textVariable(get, "SLURM_NTASKS_PER_NODE").c_str()));
    if (const char* addr = get("MASTER_ADDR"); addr && *addr) w.master_addr = addr;
    else {
      std::string nodes = textVariable(get, "SLURM_STEP_NODELIST");
      if (nodes.empty()) nodes = textVariable(get, "SLURM_JOB_NODELIST");
      if (!nodes.empty()) w.master_addr = firstSlurmHost(nodes);
    }
    // A port of its own for each job, unless MASTER_PORT says otherwise.
    w.master_port = 29500 + intVariable(get, "SLURM_JOB_ID", 0) % 10000;
  }
  w.master_port = intVariable(get, "MASTER_PORT", w.master_port);
  if (w.master_port < 1 || w.master_port > 65535)
    throw InputError("MASTER_PORT is " + std::to_string(w.master_port) + ", not a port from 1 to 65535");
  return w;
}

}  // namespace geodl
