// ToolRun: the `runledger` CLI run as a real subprocess on a data folder
// (verify, replay --compare), the way an operator checks a server's log
// while it runs. What it printed is kept for the failure message.
#pragma once

#include <string>
#include <vector>

namespace runledger::testing {

struct ToolRun {
  int code = -1;  // exit code; 128 + signal when killed, -1 when it could not run
  std::string out;
  std::string err;
};

// Runs the built `runledger` with `args`, stdin from /dev/null and no
// RUNLEDGER_* variable of the caller's environment (the fault tests'
// settings are not the tool's).
ToolRun run_runledger(const std::vector<std::string>& args);

}  // namespace runledger::testing
