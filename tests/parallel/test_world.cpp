// The launchers' environments: torchrun's, Slurm's, none; and the values that are refused.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "base/errors.h"
#include "parallel/world.h"

namespace geodl {
namespace {

WorldInfo worldOf(const std::map<std::string, std::string>& variables) {
  return worldFromEnvironment([&](const char* name) -> const char* {
    auto it = variables.find(name);
    return it == variables.end() ? nullptr : it->second.c_str();
  });
}

void expectRefused(const std::map<std::string, std::string>& variables, const std::string& part) {
  try {
    worldOf(variables);
    ADD_FAILURE() << "no error; expected one containing: " << part;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(World, OneProcessWithoutALauncher) {
  const WorldInfo w = worldOf({});
  EXPECT_FALSE(w.distributed());
  EXPECT_EQ(w.rank, 0);
  EXPECT_EQ(w.size, 1);
}

TEST(World, TorchrunsVariablesAndItsAgentStore) {
  const WorldInfo w = worldOf({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"},
                               {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29400"}, {"TORCHELASTIC_RUN_ID", "x"},
                               {"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"TORCHELASTIC_RESTART_COUNT", "2"}});
  EXPECT_TRUE(w.distributed());
  EXPECT_EQ(w.rank, 3);
  EXPECT_EQ(w.size, 4);
  EXPECT_EQ(w.local_rank, 1);
  EXPECT_EQ(w.local_size, 2);
  EXPECT_EQ(w.master_addr, "node7");
  EXPECT_EQ(w.master_port, 29400);
  EXPECT_TRUE(w.agent_store);
  EXPECT_EQ(w.store_prefix, "/worker/attempt_2");  // as torchrun's Python workers use
  EXPECT_EQ(w.launcher, "torchrun");
}

TEST(World, SlurmsVariablesAndTheJobsFirstHost) {
  const WorldInfo w = worldOf({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"},
                               {"SLURM_NTASKS_PER_NODE", "4(x2)"}, {"SLURM_JOB_ID", "123456"},
                               {"SLURM_JOB_NODELIST", "gpu[03-04]"}});
  EXPECT_EQ(w.rank, 5);
  EXPECT_EQ(w.size, 8);
  EXPECT_EQ(w.local_rank, 1);
  EXPECT_EQ(w.local_size, 4);
  EXPECT_EQ(w.master_addr, "gpu03");
  EXPECT_EQ(w.master_port, 29500 + 123456 % 10000);
  EXPECT_FALSE(w.agent_store);
  EXPECT_EQ(w.launcher, "srun");
  EXPECT_EQ(worldOf({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"MASTER_ADDR", "head"}, {"MASTER_PORT", "4000"}})
                .master_addr, "head");
  EXPECT_EQ(firstSlurmHost("gpu[03-05,09],cpu1"), "gpu03");
  EXPECT_EQ(firstSlurmHost("a1,b[1-2]"), "a1");
  EXPECT_EQ(firstSlurmHost("single"), "single");
}

TEST(World, InconsistentVariablesAreRefusedWithTheirNames) {
  expectRefused({{"WORLD_SIZE", "0"}, {"RANK", "0"}}, "WORLD_SIZE is 0");
  expectRefused({{"WORLD_SIZE", "2"}, {"RANK", "2"}}, "RANK is 2 but WORLD_SIZE is 2: ranks go from 0 to 1");
  expectRefused({{"WORLD_SIZE", "two"}}, "WORLD_SIZE is 'two', not a whole number");
  expectRefused({{"WORLD_SIZE", "2"}, {"RANK", "0"}, {"MASTER_PORT", "70000"}}, "MASTER_PORT is 70000");
  expectRefused({{"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "4"}}, "SLURM_PROCID is 4 but SLURM_NTASKS is 2");
}

}  // namespace
}  // namespace geodl
