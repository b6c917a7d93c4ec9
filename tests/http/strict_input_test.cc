// Input that would otherwise be read quietly wrong is refused, on a real
// runledgerd: a JSON key given twice in one object (the parser would keep
// the last), a query parameter a route does not take (a misspelt filter
// would list everything) or gives twice. Each is a 422 naming it, and
// changes nothing.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;
using StrictInputTest = ServerTest;

TEST_F(StrictInputTest, AKeyGivenTwiceInOneObjectIs422AtAnyDepth) {
  EXPECT_TRUE(
      IsError(client().post_raw("/v1/jobs", R"({"id":"j1","kind":"a","target":"t","kind":"b"})"),
              422, "duplicate_field"));
  ApiReply nested = client().post_raw(
      "/v1/jobs", R"({"id":"j1","kind":"a","target":"t","input":{"day":1,"rows":{"n":1,"n":2}}})");
  EXPECT_TRUE(IsError(nested, 422, "duplicate_field"));
  EXPECT_EQ(nested.json.value("field", ""), "n");
  EXPECT_EQ(client().event_count(), 0u);
  // The same key in two different objects is no duplicate.
  EXPECT_TRUE(IsStatus(
      client().post_raw("/v1/jobs", R"({"id":"j1","kind":"a","target":"t","input":{"kind":"x"}})"),
      201));
}

TEST_F(StrictInputTest, AQueryParameterTheRouteDoesNotTakeIs422) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  for (const std::string path :
       {"/v1/jobs?stat=RUNNING", "/v1/jobs/j1?asof=1", "/v1/holds?opened=true",
        "/v1/connectors?state=active", "/v1/health?verbose=1", "/v1/events?stream=job/&typ=X"}) {
    ApiReply r = client().get(path);
    EXPECT_TRUE(IsError(r, 422, "invalid_query")) << path;
  }
  ApiReply post = client().post("/v1/jobs/j1/cancel?force=true", json::object());
  EXPECT_TRUE(IsError(post, 422, "invalid_query"));
  EXPECT_EQ(post.json.value("field", ""), "force");
  EXPECT_FALSE(job_view(client(), "j1").value("cancel_requested", true));
}

TEST_F(StrictInputTest, AParameterGivenTwiceIs422UnlessItRepeats) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  EXPECT_TRUE(IsError(client().get("/v1/jobs?limit=1&limit=2"), 422, "invalid_query"));
  EXPECT_TRUE(IsError(client().get("/v1/jobs?state=QUEUED&state=RUNNING"), 422, "invalid_query"));
  // type repeats: each one adds a type.
  EXPECT_TRUE(IsStatus(client().get("/v1/events?type=JobEnqueued&type=HoldPlaced"), 200));
}

}  // namespace
}  // namespace runledger::testing
