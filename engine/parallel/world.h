// Which process of a data-parallel job this is, from the launcher's environment: torchrun
// (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), Slurm's srun
// (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, the job's first host), or `geodl --nproc`
// (torchrun's variables). Standard library only.
#pragma once

#include <functional>
#include <string>

namespace geodl {

struct WorldInfo {
  int rank = 0, size = 1;              // this process among all of the job's
  int local_rank = 0, local_size = 1;  // among those of this machine
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  // torchrun's agent already hosts the store (TORCHELASTIC_USE_AGENT_STORE=True): every
  // rank connects as a client, under the prefix torchrun's Python workers use.
  bool agent_store = false;
  std::string store_prefix;
  std::string launcher = "one process";  // "torchrun", "srun", "geodl --nproc"
  bool distributed() const { return size > 1; }
};

// The world this process belongs to (one process when no launcher's variables are set).
// Throws InputError naming the variable for inconsistent values (WORLD_SIZE=0, RANK at or
// over WORLD_SIZE, a port outside 1-65535).
WorldInfo worldFromEnvironment(const std::function<const char*(const char*)>& getenv = {});

// The first host of a Slurm node list: "gpu[03-05,09],cpu1" -> "gpu03".
std::string firstSlurmHost(const std::string& nodelist);

}  // namespace geodl
