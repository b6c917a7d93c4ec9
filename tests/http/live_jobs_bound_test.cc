// The bound on live jobs (docs/operations.md, Limits): with --live-jobs-max
// jobs not finished, an enqueue of a new job is 503 `overloaded` and changes
// nothing; the same enqueue sent again for a job already held is answered
// as always; once a job finishes, a new one is taken again.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

class LiveJobsBoundTest : public ServerTest {
 protected:
  std::vector<std::string> initial_flags() const override { return {"--live-jobs-max", "2"}; }
};

TEST_F(LiveJobsBoundTest, AnEnqueueBeyondTheBoundIs503UntilAJobFinishes) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "a", "t1", "k"), 201));
  ASSERT_TRUE(IsStatus(enqueue(client(), "b", "t2", "k"), 201));
  const size_t events = client().event_count();

  ApiReply over = enqueue(client(), "c", "t3", "k");
  ApiReply again = enqueue(client(), "a", "t1", "k");

  EXPECT_EQ(over.status, 503) << over.body;
  EXPECT_EQ(over.json.value("code", ""), "overloaded");
  EXPECT_NE(over.json.value("error", "").find("--live-jobs-max"), std::string::npos) << over.body;
  EXPECT_EQ(client().get("/v1/jobs/c").status, 404);
  EXPECT_EQ(again.status, 200) << again.body;  // a repeated create, as always
  EXPECT_EQ(client().event_count(), events);

  ApiReply cancelled = client().post("/v1/jobs/b/cancel", {{"reason", "not needed"}});
  ASSERT_EQ(cancelled.status, 202) << cancelled.body;
  EXPECT_TRUE(IsStatus(enqueue(client(), "c", "t3", "k"), 201));
}

}  // namespace
}  // namespace runledger::testing
