// Real replies of a running server against its own OpenAPI document: a job
// run through its worker calls, a connector through a sync, a hold placed and
// released, the gate, the logs, and refusals. Every reply's status must be
// one the document lists for the operation and its body must match the
// schema, field by field: a field a view gains and the document lacks fails.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/openapi_validator.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

class OpenApiRepliesTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    ApiReply r = client().get("/v1/openapi.json");
    ASSERT_EQ(r.status, 200) << r.body;
    doc_ = std::make_unique<OpenApiDocument>(r.json);
  }

  // Checks `r` as a reply to `method` on the document's `pattern`.
  void expect_documented(const ApiReply& r, const std::string& method, const std::string& pattern) {
    ++checked_;
    nlohmann::json body = r.body.empty() ? nlohmann::json(nullptr) : r.json;
    for (const std::string& e : doc_->check_reply(method, pattern, r.status, body)) {
      ADD_FAILURE() << e << "\n  body: " << r.body.substr(0, 2000);
    }
  }

  std::unique_ptr<OpenApiDocument> doc_;
  int checked_ = 0;
};

TEST_F(OpenApiRepliesTest, AJobsRunMatchesTheDocument) {
  ApiClient& c = client();
  const nlohmann::json plan = {"FETCH", "LOAD"};
  ApiReply r = enqueue(c, "oa-job-1", "oa/t1", "sync", {{"plan", plan}, {"input", {{"a", 1}}}});
  expect_documented(r, "post", "/v1/jobs");
  r = enqueue(c, "oa-job-1", "oa/t1", "sync", {{"plan", plan}, {"input", {{"a", 1}}}});
  expect_documented(r, "post", "/v1/jobs");
  EXPECT_EQ(r.status, 200);
  expect_documented(enqueue(c, "oa-job-2", "oa/t1", "sync"), "post", "/v1/jobs");

  r = c.post("/v1/jobs/claim", {{"worker", "w1"}, {"kinds", {"sync"}}, {"lease_s", kTestLeaseS}});
  expect_documented(r, "post", "/v1/jobs/claim");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string token = token_of(r);
  const std::string id = r.json.at("job").at("id");
  // The other job on the same target is blocked: nothing is ready.
  r = c.post("/v1/jobs/claim", {{"worker", "w2"}});
  expect_documented(r, "post", "/v1/jobs/claim");
  EXPECT_EQ(r.status, 204);
  expect_documented(c.get("/v1/jobs/oa-job-2"), "get", "/v1/jobs/{id}");

  expect_documented(worker_call(c, id, "heartbeat", token), "post", "/v1/jobs/{id}/heartbeat");
  expect_documented(worker_call(c, id, "start", token, {{"execution_handle", "pid-1"}}), "post",
                    "/v1/jobs/{id}/start");
  expect_documented(worker_call(c, id, "steps/FETCH/start", token), "post",
                    "/v1/jobs/{id}/steps/{step}/start");
  expect_documented(worker_call(c, id, "steps/FETCH/done", token, {{"output", {{"rows", 3}}}}),
                    "post", "/v1/jobs/{id}/steps/{step}/done");
  expect_documented(worker_call(c, id, "steps/LOAD/start", token), "post",
                    "/v1/jobs/{id}/steps/{step}/start");
  expect_documented(worker_call(c, id, "steps/LOAD/failed", token, {{"error", "disk full"}}),
                    "post", "/v1/jobs/{id}/steps/{step}/failed");
  expect_documented(c.post("/v1/jobs/" + id + "/rerun", {{"reason", "again"}}), "post",
                    "/v1/jobs/{id}/rerun");
  expect_documented(c.post("/v1/jobs/oa-job-2/cancel", {{"reason", "not needed"}}), "post",
                    "/v1/jobs/{id}/cancel");
  expect_documented(c.get("/v1/jobs"), "get", "/v1/jobs");
  expect_documented(c.get("/v1/jobs?limit=1"), "get", "/v1/jobs");
  expect_documented(c.get("/v1/jobs/" + id + "?as_of=1"), "get", "/v1/jobs/{id}");
  expect_documented(c.get("/v1/jobs/" + id + "/events"), "get", "/v1/jobs/{id}/events");
  expect_documented(c.get("/v1/events?limit=5"), "get", "/v1/events");
  expect_documented(c.get("/v1/events?stream=job/&type=JobEnqueued"), "get", "/v1/events");

  // Refusals.
  expect_documented(c.get("/v1/jobs/oa-none"), "get", "/v1/jobs/{id}");
  expect_documented(worker_call(c, id, "heartbeat", std::string(32, 'a')), "post",
                    "/v1/jobs/{id}/heartbeat");
  expect_documented(c.post("/v1/jobs", {{"kind", "sync"}}), "post", "/v1/jobs");
  expect_documented(c.get("/v1/jobs?stat=RUNNING"), "get", "/v1/jobs");
  expect_documented(c.post_raw("/v1/jobs", "{not json", {{"Content-Type", "application/json"}}),
                    "post", "/v1/jobs");
  EXPECT_GE(checked_, 25);
}

TEST_F(OpenApiRepliesTest, AConnectorsSyncAndHoldsMatchTheDocument) {
  ApiClient& c = client();
  ApiReply r = c.post("/v1/connectors", {{"id", "oa-c1"}, {"name", "shop"}});
  expect_documented(r, "post", "/v1/connectors");
  expect_documented(c.patch("/v1/connectors/oa-c1", {{"sync_schedule_s", 3600}}), "patch",
                    "/v1/connectors/{id}");
  r = c.post("/v1/connectors/oa-c1/sync", nlohmann::json::object());
  expect_documented(r, "post", "/v1/connectors/{id}/sync");
  ASSERT_EQ(r.status, 202) << r.body;
  const std::string sync = r.json.at("sync_id");
  const std::string reports = "/v1/connectors/oa-c1/syncs/" + sync;
  expect_documented(
      c.post(reports + "/progress",
             {{"documents",
               {{"running", {"d1", "d2"}}, {"failed", {{{"id", "d3"}, {"error", "x"}}}}}}}),
      "post", "/v1/connectors/{id}/syncs/{sync_id}/progress");
  expect_documented(c.post(reports + "/succeeded", {{"documents", {{"indexed", {"d1", "d2"}}}}}),
                    "post", "/v1/connectors/{id}/syncs/{sync_id}/succeeded");
  // A report of a sync that is over: 409 stale_sync, with "continue": false.
  expect_documented(c.post(reports + "/progress", nlohmann::json::object()), "post",
                    "/v1/connectors/{id}/syncs/{sync_id}/progress");
  r = c.post("/v1/connectors/oa-c1/sync", nlohmann::json::object());
  expect_documented(r, "post", "/v1/connectors/{id}/sync");
  expect_documented(c.post("/v1/connectors/oa-c1/sync", nlohmann::json::object()), "post",
                    "/v1/connectors/{id}/sync");
  expect_documented(c.post("/v1/connectors/oa-c1/syncs/" + r.json.value("sync_id", "") + "/failed",
                           {{"error", "timeout"}}),
                    "post", "/v1/connectors/{id}/syncs/{sync_id}/failed");
  expect_documented(c.get("/v1/connectors/oa-c1"), "get", "/v1/connectors/{id}");
  expect_documented(c.get("/v1/connectors"), "get", "/v1/connectors");
  expect_documented(c.get("/v1/connectors/oa-c1/documents"), "get",
                    "/v1/connectors/{id}/documents");
  expect_documented(c.get("/v1/connectors/oa-c1/documents?status=failed"), "get",
                    "/v1/connectors/{id}/documents");
  expect_documented(c.get("/v1/connectors/oa-c1/events"), "get", "/v1/connectors/{id}/events");
  expect_documented(c.post("/v1/connectors/oa-c1/sync/abort", nlohmann::json::object()), "post",
                    "/v1/connectors/{id}/sync/abort");
  expect_documented(c.del("/v1/connectors/oa-c1"), "delete", "/v1/connectors/{id}");

  r = c.post("/v1/holds", {{"target", "oa/t2"}, {"kind", "RESULT_UNKNOWN"}, {"reason", "check"}});
  expect_documented(r, "post", "/v1/holds");
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string hold = r.json.at("id");
  expect_documented(c.get("/v1/targets/oa%2Ft2/gate"), "get", "/v1/targets/{target}/gate");
  expect_documented(c.get("/v1/holds?open=true"), "get", "/v1/holds");
  expect_documented(
      c.post("/v1/holds/" + hold + "/release",
             {{"note", "checked"}, {"execution_stopped", true}, {"outcome", "FAILED"}}),
      "post", "/v1/holds/{id}/release");
  expect_documented(c.get("/v1/holds/" + hold), "get", "/v1/holds/{id}");
  expect_documented(c.get("/v1/holds/" + hold + "/events"), "get", "/v1/holds/{id}/events");
  expect_documented(c.get("/v1/holds"), "get", "/v1/holds");
  expect_documented(c.get("/v1/targets/oa%2Ft2/gate"), "get", "/v1/targets/{target}/gate");
  expect_documented(c.get("/v1/health"), "get", "/v1/health");
  expect_documented(c.get("/v1/whoami"), "get", "/v1/whoami");
  EXPECT_GE(checked_, 25);
}

}  // namespace
}  // namespace runledger::testing
