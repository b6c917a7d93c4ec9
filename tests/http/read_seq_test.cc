// X-Runledger-Seq on every read (docs/api.md): how far the log behind the
// reply goes, whether the engine answered it from memory (a live job) or the
// store did (lists, finished jobs, events, time travel, a 404).
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using ReadSeqTest = ServerTest;

TEST_F(ReadSeqTest, EveryReadSaysHowFarTheLogBehindItGoes) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "live", "t1", "k"), 201));
  ASSERT_TRUE(IsStatus(enqueue(client(), "over", "t2", "k"), 201));
  ASSERT_TRUE(IsStatus(client().post("/v1/jobs/over/cancel", nlohmann::json::object()), 202));
  ApiReply hold = client().post(
      "/v1/holds", {{"target", "t3"}, {"kind", "RESULT_UNKNOWN"}, {"reason", "checking"}});
  ASSERT_TRUE(IsStatus(hold, 201));
  const std::string hold_id = hold.json.value("id", "");
  const uint64_t last = client().event_count();
  ASSERT_GE(last, 4u);

  for (const std::string& path : std::vector<std::string>{
           "/v1/jobs/live", "/v1/jobs/over", "/v1/jobs", "/v1/jobs?state=CANCELLED", "/v1/holds",
           "/v1/holds/" + hold_id, "/v1/events", "/v1/events?type=HoldPlaced",
           "/v1/jobs/over/events", "/v1/jobs/over?as_of=2", "/v1/connectors", "/v1/jobs/nope",
           "/v1/targets/t1/gate", "/v1/health"}) {
    ApiReply r = client().get(path);
    EXPECT_EQ(r.header("X-Runledger-Seq"), std::to_string(last))
        << path << " answered " << r.status << " " << r.body;
  }
}

}  // namespace
}  // namespace runledger::testing
