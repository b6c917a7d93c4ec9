// runledgerd's threads by name (base/thread_name.h), as `top -H` and perf
// show them: the sequencer, the writer, the timers, the HTTP pool, and the
// keeper that gives free memory back (base/free_memory.h), which nothing
// else would show is running.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

std::set<std::string> thread_names(pid_t pid) {
  std::set<std::string> names;
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name)) names.insert(name);
  }
  return names;
}

class ThreadNamesTest : public ServerTest {};

TEST_F(ThreadNamesTest, TheServerRunsEachOfItsThreadsByName) {
  const auto names = thread_names(server().pid());
  for (const char* name :
       {"rl-sequencer", "rl-writer", "rl-due-timer", "rl-http-pool", "rl-free-memory"}) {
    EXPECT_TRUE(names.count(name)) << name << " is not among the server's threads";
  }
}

}  // namespace
}  // namespace runledger::testing
