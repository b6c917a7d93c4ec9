// runledger bench work at CI size: real runners against a runledgerd it
// starts; the run checks its own counts (every job succeeded, a summary line
// for each) and reports every figure. Its speed is not judged here.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/subprocess.h"

namespace runledger::testing {
namespace {

TEST(WorkBenchTest, ACiSizedRunCountsEveryStepAndReportsItsFigures) {
  CliResult r = run_cli({"bench", "work", "--runners", "2", "--jobs", "2", "--heartbeat-runners",
                         "1", "--idle-runners", "1", "--window-s", "1", "--json"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j.value("count", 0), 4) << r.out;
  EXPECT_EQ(j["checks"].value("summaries", 0), 4) << r.out;
  for (const char* figure :
       {"claim_to_exec_p50_ms", "claim_to_exec_p99_ms", "exit_to_done_p50_ms",
        "exit_to_done_p99_ms", "server_cpu_per_heartbeat_us", "server_core_pct_per_idle_runner"}) {
    EXPECT_TRUE(j["figures"].contains(figure)) << figure << " " << r.out;
  }
  EXPECT_GT(j["figures"].value("claim_to_exec_p50_ms", 0.0), 0.0) << r.out;
}

}  // namespace
}  // namespace runledger::testing
