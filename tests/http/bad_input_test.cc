// 422 on a real server (docs/performance.md "Bad input"): missing fields, wrong
// types, unknown fields, out-of-range and huge numbers, bad times, unknown
// enum values, a 10,000-step plan, free-form fields nested too deeply, lease
// tokens of the wrong length, invalid ids and bad query parameters. Each
// reply names the offending field, and each refusal leaves the log exactly
// as it was.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

constexpr size_t kStepsTooMany = 10000;
constexpr size_t kIdCharsMax = 128;
constexpr size_t kHugeTokenChars = 100'000;

struct BadRequest {
  std::string what;  // the scenario, for the failure message
  std::string method;
  std::string path;
  std::string body;   // raw JSON text ("" for GET)
  std::string code;   // expected `code`
  std::string field;  // the field the reply must name
};

BadRequest post(std::string what, std::string path, const json& body, std::string code,
                std::string field) {
  return {std::move(what), "POST", std::move(path), body.dump(), std::move(code), std::move(field)};
}

class BadInputTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
    ApiReply claimed = claim(client(), "w1", "k");
    ASSERT_TRUE(IsStatus(claimed, 200));
    token_ = token_of(claimed);
    ASSERT_TRUE(
        IsStatus(worker_call(client(), "j1", "start", token_, {{"execution_handle", "h1"}}), 200));
    ASSERT_TRUE(IsStatus(client().post("/v1/connectors", {{"id", "c1"}, {"name", "Shop"}}), 201));
    ApiReply sync = client().post("/v1/connectors/c1/sync", json::object());
    ASSERT_TRUE(IsStatus(sync, 202));
    sync_id_ = sync.json.value("sync_id", "");
  }

  // Sends each request; each must be a 422 with its code, naming its field
  // in `field` and in the sentence, and must add no event.
  void expect_all_refused(const std::vector<BadRequest>& requests) {
    size_t events = client().event_count();
    for (const auto& b : requests) {
      SCOPED_TRACE(b.what + ": " + b.method + " " + b.path + " " + b.body.substr(0, 200));
      ApiReply r = client().send(b.method, b.path, b.body, {});
      EXPECT_TRUE(IsError(r, 422, b.code));
      EXPECT_EQ(r.json.value("field", ""), b.field) << r.body;
      EXPECT_NE(r.json.value("error", "").find(b.field), std::string::npos)
          << "the message does not name '" << b.field << "': " << r.body;
      EXPECT_EQ(client().event_count(), events);
    }
  }

  std::string token_;
  std::string sync_id_;
};

TEST_F(BadInputTest, MissingFieldsAreNamed) {
  expect_all_refused({
      post("enqueue without kind", "/v1/jobs", {{"target", "t"}}, "missing_field", "kind"),
      post("enqueue without target", "/v1/jobs", {{"kind", "k"}}, "missing_field", "target"),
      post("claim without worker", "/v1/jobs/claim", json::object(), "missing_field", "worker"),
      post("heartbeat without token", "/v1/jobs/j1/heartbeat", json::object(), "missing_field",
           "lease_token"),
      post("step failure without error", "/v1/jobs/j1/steps/FETCH/failed",
           {{"lease_token", token_}}, "missing_field", "error"),
      post("reattach exited without exit code", "/v1/jobs/j1/reattach",
           {{"worker", "w"}, {"execution_handle", "h1"}, {"observed", "exited"}}, "missing_field",
           "exit_code"),
      post("connector without name", "/v1/connectors", {{"id", "c2"}}, "missing_field", "name"),
      post("sync failure without error", "/v1/connectors/c1/syncs/" + sync_id_ + "/failed",
           json::object(), "missing_field", "error"),
      post("hold without reason", "/v1/holds", {{"target", "t9"}, {"kind", "RESULT_UNKNOWN"}},
           "missing_field", "reason"),
  });
}

TEST_F(BadInputTest, WrongTypesAreNamed) {
  expect_all_refused({
      post("kind as a number", "/v1/jobs", {{"kind", 5}, {"target", "t"}}, "invalid_field", "kind"),
      post("plan as a string", "/v1/jobs", {{"kind", "k"}, {"target", "t"}, {"plan", "FETCH"}},
           "invalid_field", "plan"),
      post("plan holding a number", "/v1/jobs",
           {{"kind", "k"}, {"target", "t"}, {"plan", {"FETCH", 2}}}, "invalid_field", "plan"),
      post("max_attempts as a string", "/v1/jobs",
           {{"kind", "k"}, {"target", "t"}, {"max_attempts", "3"}}, "invalid_field",
           "max_attempts"),
      post("priority as a boolean", "/v1/jobs",
           {{"kind", "k"}, {"target", "t"}, {"priority", true}}, "invalid_field", "priority"),
      post("kinds as a string", "/v1/jobs/claim", {{"worker", "w"}, {"kinds", "k"}},
           "invalid_field", "kinds"),
      post("token as a number", "/v1/jobs/j1/heartbeat", {{"lease_token", 12345}}, "invalid_field",
           "lease_token"),
      post("retryable as a string", "/v1/jobs/j1/steps/FETCH/failed",
           {{"lease_token", token_}, {"error", "boom"}, {"retryable", "yes"}}, "invalid_field",
           "retryable"),
      post("schedule as a string", "/v1/connectors",
           {{"id", "c2"}, {"name", "n"}, {"sync_schedule_s", "60"}}, "invalid_field",
           "sync_schedule_s"),
      post("documents as an array", "/v1/connectors/c1/syncs/" + sync_id_ + "/progress",
           {{"documents", json::array()}}, "invalid_field", "documents"),
      post("execution_stopped as a string", "/v1/holds/h-any/release",
           {{"note", "n"}, {"execution_stopped", "yes"}}, "invalid_field", "execution_stopped"),
  });
}

// docs/api.md: a failed document of a report is {"id", "error"}, both
// required. The field is named by its place in the report.
TEST_F(BadInputTest, FailedDocumentsWithoutAnErrorAreRefusedNamingTheField) {
  const std::string sync = "/v1/connectors/c1/syncs/" + sync_id_;
  auto failed = [](json items) { return json{{"documents", {{"failed", std::move(items)}}}}; };
  expect_all_refused({
      post("progress, no error", sync + "/progress", failed({{{"id", "d1"}}}), "missing_field",
           "documents.failed[0].error"),
      post("succeeded, no error", sync + "/succeeded", failed({{{"id", "d1"}}}), "missing_field",
           "documents.failed[0].error"),
      post("the second item, no error", sync + "/progress",
           failed({{{"id", "d1"}, {"error", "parse error"}}, {{"id", "d2"}}}), "missing_field",
           "documents.failed[1].error"),
      post("error as a number", sync + "/progress", failed({{{"id", "d1"}, {"error", 500}}}),
           "invalid_field", "documents.failed[0].error"),
      post("error empty", sync + "/progress", failed({{{"id", "d1"}, {"error", ""}}}),
           "invalid_field", "documents.failed[0].error"),
      post("no id", sync + "/progress", failed({{{"error", "parse error"}}}), "missing_field",
           "documents.failed[0].id"),
      post("an unknown field", sync + "/progress",
           failed({{{"id", "d1"}, {"error", "e"}, {"retry", true}}}), "unknown_field",
           "documents.failed[0].retry"),
  });
  // Nothing was kept: the sync still runs and has no documents.
  ApiReply docs = client().get("/v1/connectors/c1/documents");
  ASSERT_TRUE(IsStatus(docs, 200));
  EXPECT_TRUE(docs.json.at("documents").empty()) << docs.body;
  EXPECT_EQ(client().get("/v1/connectors/c1").json.value("sync_status", ""), "running");
}

// A null is a value of the wrong type for every field the contract does not
// say may be null; only sync_schedule_s may (it removes the schedule).
TEST_F(BadInputTest, NullForAFieldThatMayNotBeNullIsAMistypedField) {
  auto patch = [](std::string what, const json& body, std::string field) {
    BadRequest r =
        post(std::move(what), "/v1/connectors/c1", body, "invalid_field", std::move(field));
    r.method = "PATCH";
    return r;
  };
  auto job = [](const std::string& field) {
    return json{{"kind", "k"}, {"target", "t"}, {field, nullptr}};
  };
  const std::string sync = "/v1/connectors/c1/syncs/" + sync_id_;
  expect_all_refused({
      patch("connector status", {{"status", nullptr}}, "status"),
      patch("connector name", {{"name", nullptr}}, "name"),
      patch("connector name beside a valid status", {{"status", "paused"}, {"name", nullptr}},
            "name"),
      post("connector id", "/v1/connectors", {{"id", nullptr}, {"name", "n"}}, "invalid_field",
           "id"),
      post("connector name", "/v1/connectors", {{"id", "c2"}, {"name", nullptr}}, "invalid_field",
           "name"),
      post("report documents", sync + "/progress", {{"documents", nullptr}}, "invalid_field",
           "documents"),
      post("a failed document's error", sync + "/succeeded",
           {{"documents", {{"failed", {{{"id", "d1"}, {"error", nullptr}}}}}}}, "invalid_field",
           "documents.failed[0].error"),
      post("job id", "/v1/jobs", job("id"), "invalid_field", "id"),
      post("job plan", "/v1/jobs", job("plan"), "invalid_field", "plan"),
      post("job reuse_on_rerun", "/v1/jobs", job("reuse_on_rerun"), "invalid_field",
           "reuse_on_rerun"),
      post("job max_attempts", "/v1/jobs", job("max_attempts"), "invalid_field", "max_attempts"),
      post("job priority", "/v1/jobs", job("priority"), "invalid_field", "priority"),
      post("job not_before", "/v1/jobs", job("not_before"), "invalid_field", "not_before"),
      post("claim kinds", "/v1/jobs/claim", {{"worker", "w"}, {"kinds", nullptr}}, "invalid_field",
           "kinds"),
      post("claim lease_s", "/v1/jobs/claim", {{"worker", "w"}, {"lease_s", nullptr}},
           "invalid_field", "lease_s"),
      post("heartbeat lease_s", "/v1/jobs/j1/heartbeat",
           {{"lease_token", token_}, {"lease_s", nullptr}}, "invalid_field", "lease_s"),
      post("step failure retryable", "/v1/jobs/j1/steps/FETCH/failed",
           {{"lease_token", token_}, {"error", "boom"}, {"retryable", nullptr}}, "invalid_field",
           "retryable"),
      post("cancel reason", "/v1/jobs/j1/cancel", {{"reason", nullptr}}, "invalid_field", "reason"),
      post("hold job", "/v1/holds",
           {{"target", "t"}, {"kind", "RESULT_UNKNOWN"}, {"reason", "r"}, {"job", nullptr}},
           "invalid_field", "job"),
      post("hold outcome", "/v1/holds/h-any/release", {{"note", "n"}, {"outcome", nullptr}},
           "invalid_field", "outcome"),
  });
  EXPECT_EQ(client().get("/v1/connectors/c1").json.value("status", ""), "active");

  // sync_schedule_s may be null: it removes the schedule.
  ApiReply scheduled = client().patch("/v1/connectors/c1", {{"sync_schedule_s", 60}});
  ASSERT_TRUE(IsStatus(scheduled, 200));
  EXPECT_EQ(scheduled.json.value("sync_schedule_s", json()), 60);
  ApiReply cleared = client().patch("/v1/connectors/c1", {{"sync_schedule_s", nullptr}});
  ASSERT_TRUE(IsStatus(cleared, 200));
  EXPECT_TRUE(cleared.json.at("sync_schedule_s").is_null()) << cleared.body;
  EXPECT_TRUE(IsStatus(
      client().post("/v1/connectors", {{"id", "c2"}, {"name", "n"}, {"sync_schedule_s", nullptr}}),
      201));
}

TEST_F(BadInputTest, UnknownFieldsAreNamed) {
  expect_all_refused({
      post("enqueue", "/v1/jobs", {{"kind", "k"}, {"target", "t"}, {"colour", "red"}},
           "unknown_field", "colour"),
      post("claim", "/v1/jobs/claim", {{"worker", "w"}, {"lease_ms", 5}}, "unknown_field",
           "lease_ms"),
      post("heartbeat", "/v1/jobs/j1/heartbeat", {{"lease_token", token_}, {"force", true}},
           "unknown_field", "force"),
      post("connector", "/v1/connectors", {{"name", "n"}, {"status", "active"}}, "unknown_field",
           "status"),
      post("report documents", "/v1/connectors/c1/syncs/" + sync_id_ + "/progress",
           {{"documents", {{"deleted", json::array()}}}}, "unknown_field", "documents.deleted"),
      post("hold", "/v1/holds",
           {{"target", "t"}, {"kind", "RESULT_UNKNOWN"}, {"reason", "r"}, {"by", "me"}},
           "unknown_field", "by"),
      post("a POST that takes no field", "/v1/connectors/c1/sync/abort", {{"now", true}},
           "unknown_field", "now"),
  });
}

TEST_F(BadInputTest, OutOfRangeAndHugeNumbersAreRefused) {
  auto job = [](const std::string& field, json value) {
    return json{{"kind", "k"}, {"target", "t"}, {field, std::move(value)}};
  };
  expect_all_refused({
      post("max_attempts 0", "/v1/jobs", job("max_attempts", 0), "invalid_field", "max_attempts"),
      post("max_attempts 101", "/v1/jobs", job("max_attempts", 101), "invalid_field",
           "max_attempts"),
      post("max_attempts negative", "/v1/jobs", job("max_attempts", -1), "invalid_field",
           "max_attempts"),
      post("max_attempts not whole", "/v1/jobs", job("max_attempts", 2.5), "invalid_field",
           "max_attempts"),
      post("priority huge", "/v1/jobs", job("priority", 1'000'000'000'000'000LL), "invalid_field",
           "priority"),
      post("priority past uint64", "/v1/jobs", job("priority", 18446744073709551615ULL),
           "invalid_field", "priority"),
      {"priority past any integer", "POST", "/v1/jobs",
       R"({"kind": "k", "target": "t", "priority": 1e300})", "invalid_field", "priority"},
      // Valid JSON, but past what a double holds: still the field's fault.
      {"max_attempts past any double", "POST", "/v1/jobs",
       R"({"kind": "k", "target": "t", "max_attempts": 1e400})", "invalid_field", "max_attempts"},
      {"priority below any double", "POST", "/v1/jobs",
       R"({"kind": "k", "target": "t", "priority": -1e400})", "invalid_field", "priority"},
      {"a number past any double inside input", "POST", "/v1/jobs",
       R"({"kind": "k", "target": "t", "input": {"rows": [1, 2, 1e400]}})", "invalid_field",
       "input.rows[2]"},
      {"lease_s past any double", "POST", "/v1/jobs/claim", R"({"worker": "w", "lease_s": 1e999})",
       "invalid_field", "lease_s"},
      post("lease_s 0", "/v1/jobs/claim", {{"worker", "w"}, {"lease_s", 0}}, "invalid_field",
           "lease_s"),
      post("lease_s over an hour", "/v1/jobs/claim", {{"worker", "w"}, {"lease_s", 3601}},
           "invalid_field", "lease_s"),
      post("lease_s negative", "/v1/jobs/j1/heartbeat", {{"lease_token", token_}, {"lease_s", -5}},
           "invalid_field", "lease_s"),
      post("schedule 0", "/v1/connectors", {{"name", "n"}, {"sync_schedule_s", 0}}, "invalid_field",
           "sync_schedule_s"),
      post("schedule negative", "/v1/connectors", {{"name", "n"}, {"sync_schedule_s", -60}},
           "invalid_field", "sync_schedule_s"),
      post("exit code past int32", "/v1/jobs/j1/reattach",
           {{"worker", "w"},
            {"execution_handle", "h1"},
            {"observed", "exited"},
            {"exit_code", 1LL << 40}},
           "invalid_field", "exit_code"),
  });
}

TEST_F(BadInputTest, BadTimesAreRefused) {
  auto at = [](json t) { return json{{"kind", "k"}, {"target", "t"}, {"not_before", t}}; };
  expect_all_refused({
      post("words", "/v1/jobs", at("yesterday"), "invalid_field", "not_before"),
      post("month 13", "/v1/jobs", at("2026-13-01T00:00:00Z"), "invalid_field", "not_before"),
      post("30 February", "/v1/jobs", at("2026-02-30T00:00:00Z"), "invalid_field", "not_before"),
      post("29 February of a common year", "/v1/jobs", at("2027-02-29T00:00:00Z"), "invalid_field",
           "not_before"),
      post("hour 24", "/v1/jobs", at("2026-11-29T24:00:00Z"), "invalid_field", "not_before"),
      post("no zone", "/v1/jobs", at("2026-11-29T21:08:10"), "invalid_field", "not_before"),
      post("a date alone", "/v1/jobs", at("2026-11-29"), "invalid_field", "not_before"),
      post("a number", "/v1/jobs", at(1764450490000LL), "invalid_field", "not_before"),
  });
}

TEST_F(BadInputTest, UnknownEnumValuesAreRefused) {
  expect_all_refused({
      post("outcome kind", "/v1/jobs/j1/outcome-unknown",
           {{"lease_token", token_}, {"kind", "MAYBE"}}, "invalid_field", "kind"),
      post("reattach observation", "/v1/jobs/j1/reattach",
           {{"worker", "w"}, {"execution_handle", "h1"}, {"observed", "zombie"}}, "invalid_field",
           "observed"),
      post("hold kind", "/v1/holds", {{"target", "t"}, {"kind", "SOMETIMES"}, {"reason", "r"}},
           "invalid_field", "kind"),
      post("hold outcome", "/v1/holds/h-any/release",
           {{"note", "n"}, {"execution_stopped", true}, {"outcome", "MAYBE"}}, "invalid_field",
           "outcome"),
      {"connector status", "PATCH", "/v1/connectors/c1", R"({"status": "sleeping"})",
       "invalid_field", "status"},
      {"status only the engine sets: error", "PATCH", "/v1/connectors/c1", R"({"status": "error"})",
       "invalid_field", "status"},
      {"status only the engine sets: deleting", "PATCH", "/v1/connectors/c1",
       R"({"status": "deleting"})", "invalid_field", "status"},
  });
}

TEST_F(BadInputTest, PlanOfTenThousandStepsIsRefused) {
  json plan = json::array();
  for (size_t i = 0; i < kStepsTooMany; ++i) plan.push_back("S" + std::to_string(i));
  expect_all_refused({
      post("10,000 steps", "/v1/jobs", {{"kind", "k"}, {"target", "t"}, {"plan", plan}},
           "invalid_field", "plan"),
      post("an empty plan", "/v1/jobs", {{"kind", "k"}, {"target", "t"}, {"plan", json::array()}},
           "invalid_field", "plan"),
  });
}

// `input`, `output` and `documents` take any JSON, but a value written back
// out recurses once per level: 100,000 nested arrays (200 KB, inside the
// body limit) took the server's stack and the process with it.
TEST_F(BadInputTest, FreeFormFieldsNestedBeyondTheLimitAreRefused) {
  constexpr size_t kDeep = 100'000;
  constexpr size_t kBodyDepthMax =
      128;  // kJsonBodyDepthMax (base/json_depth.h), the body itself the first
  constexpr size_t kBracketsInText = 10'000;
  auto nested = [](size_t levels) {
    std::string text(levels, '[');
    text.append(levels, ']');
    return text;
  };
  const std::string token = "\"lease_token\":\"" + token_ + "\"";
  expect_all_refused({
      {"input 100,000 levels deep", "POST", "/v1/jobs",
       R"({"kind":"k","target":"t","input":)" + nested(kDeep) + "}", "invalid_field", "input"},
      {"input one level too deep", "POST", "/v1/jobs",
       R"({"kind":"k","target":"t","input":)" + nested(kBodyDepthMax) + "}", "invalid_field",
       "input"},
      {"a step's output", "POST", "/v1/jobs/j1/steps/FETCH/done",
       "{" + token + R"(,"output":)" + nested(kDeep) + "}", "invalid_field", "output"},
      {"documents of a sync", "POST", "/v1/connectors/c1/syncs/" + sync_id_ + "/progress",
       R"({"documents":{"pending":)" + nested(kDeep) + "}}", "invalid_field", "documents"},
      {"a field that does not exist", "POST", "/v1/jobs",
       R"({"kind":"k","target":"t","deep":)" + nested(kDeep) + "}", "invalid_field", "deep"},
  });
  // Brackets inside strings are text, not levels.
  EXPECT_TRUE(IsStatus(client().send("POST", "/v1/jobs",
                                     R"({"id":"brackets","kind":"k","target":"t","input":")" +
                                         std::string(kBracketsInText, '[') + R"("})",
                                     {}),
                       201));
  // A body too deep that is not JSON, or not an object, is what it was.
  EXPECT_TRUE(
      IsError(client().send("POST", "/v1/jobs", R"({"input":)" + std::string(kDeep, '['), {}), 400,
              "invalid_json"));
  EXPECT_TRUE(IsError(client().send("POST", "/v1/jobs", nested(kDeep), {}), 400, "invalid_json"));
  // At the limit, the input is taken and comes back as it was sent.
  const std::string deepest = nested(kBodyDepthMax - 1);
  ApiReply taken =
      client().send("POST", "/v1/jobs",
                    R"({"id":"deepest","kind":"k","target":"t","input":)" + deepest + "}", {});
  ASSERT_TRUE(IsStatus(taken, 201));
  EXPECT_EQ(taken.json["input"].dump(), deepest);
  EXPECT_EQ(client().get("/v1/jobs/deepest").json["input"].dump(), deepest);
  // The worker's lease was left alone, and the server serves on.
  EXPECT_TRUE(IsStatus(worker_call(client(), "j1", "heartbeat", token_), 200));
}

TEST_F(BadInputTest, LeaseTokensOfTheWrongShapeAreRefused) {
  expect_all_refused({
      post("too short", "/v1/jobs/j1/heartbeat", {{"lease_token", "abc"}}, "invalid_field",
           "lease_token"),
      post("one too long", "/v1/jobs/j1/heartbeat", {{"lease_token", token_ + "0"}},
           "invalid_field", "lease_token"),
      post("one too short", "/v1/jobs/j1/steps/FETCH/start", {{"lease_token", token_.substr(1)}},
           "invalid_field", "lease_token"),
      post("right length, not hex", "/v1/jobs/j1/heartbeat",
           {{"lease_token", std::string(32, 'z')}}, "invalid_field", "lease_token"),
      post("empty", "/v1/jobs/j1/release", {{"lease_token", ""}}, "invalid_field", "lease_token"),
      post("huge", "/v1/jobs/j1/cancel-ack", {{"lease_token", std::string(kHugeTokenChars, 'a')}},
           "invalid_field", "lease_token"),
  });
  // The real token still works: the refusals above did not touch the lease.
  EXPECT_TRUE(IsStatus(worker_call(client(), "j1", "heartbeat", token_), 200));
}

TEST_F(BadInputTest, InvalidIdsAreRefused) {
  auto job = [](json id) { return json{{"id", std::move(id)}, {"kind", "k"}, {"target", "t"}}; };
  expect_all_refused({
      post("a space", "/v1/jobs", job("has space"), "invalid_field", "id"),
      post("empty", "/v1/jobs", job(""), "invalid_field", "id"),
      post("129 characters", "/v1/jobs", job(std::string(kIdCharsMax + 1, 'a')), "invalid_field",
           "id"),
      post("a slash", "/v1/jobs", job("a/b"), "invalid_field", "id"),
      post("not ASCII", "/v1/jobs", job("na\xc3\xafve"), "invalid_field", "id"),
      post("a number", "/v1/jobs", job(7), "invalid_field", "id"),
      post("connector id", "/v1/connectors", {{"id", "semi;colon"}, {"name", "n"}}, "invalid_field",
           "id"),
      post("hold's job id", "/v1/holds",
           {{"target", "t"}, {"kind", "RESULT_UNKNOWN"}, {"reason", "r"}, {"job", "bad id"}},
           "invalid_field", "job"),
  });
  // 128 characters is still an id.
  EXPECT_TRUE(IsStatus(client().post("/v1/jobs", job(std::string(kIdCharsMax, 'a'))), 201));
}

// An id in a path that no entity can have (a NUL, a byte that is not UTF-8,
// an escape sequence, 3,000 characters) names nothing: 404 on every route,
// never a 503 from the store refusing the stream name, and never an ignored
// sync report recorded for a sync id that no sync ever had.
TEST_F(BadInputTest, PathIdsOutsideTheAlphabetNameNothing) {
  const size_t events = client().event_count();
  const std::string long_id(3000, 'x');
  const std::vector<std::pair<std::string, std::string>> requests = {
      {"POST", "/v1/jobs/a%00b/cancel"},
      {"POST", "/v1/jobs/a%00b/rerun"},
      {"POST", "/v1/jobs/a%FFb/heartbeat"},
      {"POST", "/v1/jobs/a%20b/steps/FETCH/start"},
      {"GET", "/v1/jobs/a%00b"},
      {"GET", "/v1/jobs/a%00b/events"},
      {"GET", "/v1/jobs/" + long_id},
      {"PATCH", "/v1/connectors/c%00"},
      {"DELETE", "/v1/connectors/c%00"},
      {"POST", "/v1/connectors/c%00/sync"},
      {"GET", "/v1/connectors/c%00/events"},
      {"POST", "/v1/connectors/c1/syncs/a%FFb/progress"},
      {"POST", "/v1/connectors/c1/syncs/x%1B%5B2Jgone/succeeded"},
      {"POST", "/v1/connectors/c1/syncs/" + long_id + "/failed"},
      {"POST", "/v1/holds/h%00/release"},
      {"GET", "/v1/holds/h%00/events"},
  };
  for (const auto& [method, path] : requests) {
    SCOPED_TRACE(method + " " + path.substr(0, 80));
    ApiReply r = method == "GET"     ? client().get(path)
                 : method == "PATCH" ? client().patch(path, {{"name", "n"}})
                 : method == "DELETE"
                     ? client().del(path)
                     : client().post(
                           path, path.ends_with("/failed") ? json{{"error", "e"}} : json::object());
    EXPECT_TRUE(IsError(r, 404, "not_found")) << r.body;
  }
  EXPECT_EQ(client().event_count(), events) << "a refused request appended an event";
  // The same routes with ids in the alphabet still reach their handlers.
  EXPECT_TRUE(IsStatus(
      client().post("/v1/connectors/c1/syncs/" + sync_id_ + "/progress", json::object()), 200));
}

TEST_F(BadInputTest, BadQueryParametersAreRefused) {
  auto get = [](std::string path, std::string field) {
    return BadRequest{"query", "GET", std::move(path), "", "invalid_query", std::move(field)};
  };
  expect_all_refused({
      get("/v1/jobs?limit=1001", "limit"),
      get("/v1/jobs?limit=0", "limit"),
      get("/v1/jobs?limit=ten", "limit"),
      get("/v1/jobs?state=DONE", "state"),
      get("/v1/jobs?after=not%20an%20id", "after"),
      get("/v1/jobs?after=", "after"),
      get("/v1/jobs?after=" + std::string(kIdCharsMax + 1, 'a'), "after"),
      get("/v1/events?limit=10001", "limit"),
      get("/v1/events?after=-1", "after"),
      get("/v1/holds?open=maybe", "open"),
      get("/v1/connectors?status=sleeping", "status"),
      get("/v1/connectors?sync_status=busy", "sync_status"),
      get("/v1/connectors/c1/documents?status=lost", "status"),
      get("/v1/jobs/j1?as_of=0", "as_of"),
  });
}

}  // namespace
}  // namespace runledger::testing
