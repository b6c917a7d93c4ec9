// Reading an entity as of a past event (docs/api.md, Events: "GET
// /v1/jobs/{id}?as_of=<seq> (likewise connectors and holds): the entity as it
// was right after global event seq; 404 if it did not exist yet"), end to end
// on a real server: for a live job and for one that has finished and left
// memory, for a connector and for a hold.
#include <string>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

// Far past the end of any log these tests write.
constexpr const char* kPastTheEnd = "1000000";

class AsOfTest : public ServerTest {
 protected:
  // The seq of the last event of `stream_path` ("/v1/jobs/j1"), 0 when none.
  uint64_t last_seq_of(const std::string& stream_path) {
    const json events = client().get(stream_path + "/events").json.value("events", json::array());
    return events.empty() ? 0 : events.back().value("seq", uint64_t{0});
  }
  ApiReply as_of(const std::string& path, uint64_t seq) {
    return client().get(path + "?as_of=" + std::to_string(seq));
  }
};

TEST_F(AsOfTest, AJobAsOfAnEventIsTheJobRightAfterIt) {
  // Given j1 enqueued, claimed, run to SUCCEEDED (so it has left memory)
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  const uint64_t enqueued = last_seq_of("/v1/jobs/j1");
  ApiReply claimed = claim(client(), "w1", "k");
  ASSERT_TRUE(IsStatus(claimed, 200));
  const uint64_t leased = last_seq_of("/v1/jobs/j1");
  // (an event of another stream next)
  ASSERT_TRUE(IsStatus(enqueue(client(), "other", "t-other", "other-kind"), 201));
  const uint64_t other = last_seq_of("/v1/jobs/other");
  ASSERT_EQ(other, leased + 1);
  const std::string token = token_of(claimed);
  ASSERT_TRUE(IsStatus(worker_call(client(), "j1", "start", token), 200));
  ASSERT_EQ(run_steps(client(), "j1", token, kDefaultPlan).json.value("state", ""), "SUCCEEDED");
  // and j2 enqueued after all that
  ASSERT_TRUE(IsStatus(enqueue(client(), "j2", "t2", "k"), 201));

  // Then j1 as of each event is the job right after it
  ApiReply first = as_of("/v1/jobs/j1", enqueued);
  ASSERT_TRUE(IsStatus(first, 200));
  EXPECT_EQ(first.json.value("state", ""), "QUEUED");
  EXPECT_EQ(first.json.value("version", 0), 1);
  ApiReply second = as_of("/v1/jobs/j1", leased);
  ASSERT_TRUE(IsStatus(second, 200));
  EXPECT_EQ(second.json.value("state", ""), "LEASED");
  EXPECT_EQ(second.json.at("lease").value("worker", ""), "w1");
  // an event of another stream in between changes nothing of it
  EXPECT_EQ(as_of("/v1/jobs/j1", other).json.value("state", ""), "LEASED");
  // past the end of the log it is the job as it is now
  ApiReply now = client().get("/v1/jobs/j1");
  ApiReply later = client().get(std::string("/v1/jobs/j1?as_of=") + kPastTheEnd);
  ASSERT_TRUE(IsStatus(later, 200));
  EXPECT_EQ(later.json, now.json);
  // And a job as of an event before it existed is not found
  EXPECT_TRUE(IsError(as_of("/v1/jobs/j2", enqueued), 404, "not_found"));
  EXPECT_TRUE(IsError(as_of("/v1/jobs/nope", enqueued), 404, "not_found"));
}

// blocked_by is part of the view (docs/domain.md 1.3), so a queued job as of an
// event names what blocked it then: the job that held its target, or a
// blocking hold, also when those have finished and left memory since.
TEST_F(AsOfTest, AQueuedJobAsOfAnEventNamesWhatBlockedItThen) {
  // Given b queued behind a on target t
  ASSERT_TRUE(IsStatus(enqueue(client(), "a", "t", "ka"), 201));
  ASSERT_TRUE(IsStatus(enqueue(client(), "b", "t", "kb"), 201));
  const uint64_t queued = last_seq_of("/v1/jobs/b");
  ApiReply claimed = claim(client(), "w1", "ka");
  ASSERT_TRUE(IsStatus(claimed, 200));
  const uint64_t a_leased = last_seq_of("/v1/jobs/a");
  // until a succeeded (and left memory)
  const std::string token = token_of(claimed);
  ASSERT_TRUE(IsStatus(worker_call(client(), "a", "start", token), 200));
  ASSERT_EQ(run_steps(client(), "a", token, kDefaultPlan).json.value("state", ""), "SUCCEEDED");
  const uint64_t a_done = last_seq_of("/v1/jobs/a");
  // then behind a blocking hold on t, released since
  ApiReply placed = client().post(
      "/v1/holds", {{"target", "t"}, {"kind", "EXECUTION_STATE_UNKNOWN"}, {"reason", "lost"}});
  ASSERT_TRUE(IsStatus(placed, 201));
  const std::string hold_id = placed.json.value("id", "");
  const uint64_t held = last_seq_of("/v1/holds/" + hold_id);
  ASSERT_TRUE(IsStatus(client().post("/v1/holds/" + hold_id + "/release",
                                     {{"note", "checked"}, {"execution_stopped", true}}),
                       200));
  // and c queued behind d, which holds target u now
  ASSERT_TRUE(IsStatus(enqueue(client(), "d", "u", "kd"), 201));
  ASSERT_TRUE(IsStatus(enqueue(client(), "c", "u", "kc"), 201));
  ASSERT_TRUE(IsStatus(claim(client(), "w2", "kd"), 200));
  const uint64_t d_leased = last_seq_of("/v1/jobs/d");

  // Then b as of each event is blocked by what blocked it then
  auto blocked_by = [&](const std::string& job, uint64_t seq) {
    ApiReply r = as_of("/v1/jobs/" + job, seq);
    EXPECT_TRUE(IsStatus(r, 200));
    return r.json.value("blocked_by", json());
  };
  EXPECT_TRUE(blocked_by("b", queued).is_null());
  EXPECT_EQ(blocked_by("b", a_leased), json({{"job", "a"}}));
  EXPECT_TRUE(blocked_by("b", a_done).is_null());
  EXPECT_EQ(blocked_by("b", held), json({{"hold", hold_id}}));
  EXPECT_TRUE(client().get("/v1/jobs/b").json.at("blocked_by").is_null());
  // c by the live job holding u, as its view says now
  EXPECT_EQ(blocked_by("c", d_leased), json({{"job", "d"}}));
  ApiReply now = client().get("/v1/jobs/c");
  ApiReply later = client().get(std::string("/v1/jobs/c?as_of=") + kPastTheEnd);
  ASSERT_TRUE(IsStatus(later, 200));
  EXPECT_EQ(later.json, now.json);
}

TEST_F(AsOfTest, AConnectorAndAHoldAsOfAnEventAreThemRightAfterIt) {
  // Given a connector created and then renamed
  ASSERT_TRUE(IsStatus(client().post("/v1/connectors", {{"id", "c1"}, {"name", "first"}}), 201));
  const uint64_t created = last_seq_of("/v1/connectors/c1");
  ASSERT_TRUE(IsStatus(client().patch("/v1/connectors/c1", {{"name", "second"}}), 200));
  // and a hold placed and then released
  ApiReply placed = client().post(
      "/v1/holds", {{"target", "t1"}, {"kind", "EXECUTION_STATE_UNKNOWN"}, {"reason", "lost"}});
  ASSERT_TRUE(IsStatus(placed, 201));
  const std::string hold = "/v1/holds/" + placed.json.value("id", "");
  const uint64_t held = last_seq_of(hold);
  ASSERT_TRUE(IsStatus(
      client().post(hold + "/release", {{"note", "checked"}, {"execution_stopped", true}}), 200));

  // Then each is as it was right after the event named
  EXPECT_EQ(as_of("/v1/connectors/c1", created).json.value("name", ""), "first");
  EXPECT_EQ(as_of("/v1/connectors/c1", held).json.value("name", ""), "second");
  EXPECT_EQ(as_of(hold, held).json.value("released", true), false);
  EXPECT_EQ(client().get(hold + "?as_of=" + kPastTheEnd).json.value("released", false), true);
  // and not found before it existed
  EXPECT_TRUE(IsError(as_of(hold, created), 404, "not_found"));
}

}  // namespace
}  // namespace runledger::testing
