// Paging a stream's events and filtering the log (docs/api.md "Events") on a
// real runledgerd: a stream's events by version with after/limit/next_after;
// /v1/events by stream, kind, type (repeatable) and since; bad values 422;
// the live streams' figures in /metrics.
#include <future>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"
#include "tests/http/sse_reader.h"

namespace runledger::testing {
namespace {

using nlohmann::json;
using EventFiltersTest = ServerTest;

std::vector<int64_t> field_of(const ApiReply& r, const std::string& name) {
  std::vector<int64_t> out;
  for (const auto& e : r.json["events"]) out.push_back(e.value(name, int64_t{-1}));
  return out;
}

std::vector<std::string> text_of(const ApiReply& r, const std::string& name) {
  std::vector<std::string> out;
  for (const auto& e : r.json["events"]) out.push_back(e.value(name, ""));
  return out;
}

// A job with 2 + heartbeats events: enqueue, claim, then the heartbeats,
// sent from kSenders clients at once so that they share fsyncs.
void job_with_heartbeats(ApiClient& c, int port, const std::string& id, int heartbeats) {
  constexpr int kSenders = 8;
  ASSERT_TRUE(IsStatus(enqueue(c, id, "t-" + id, "k-" + id), 201));
  ApiReply claimed = claim(c, "w1", "k-" + id);
  ASSERT_TRUE(IsStatus(claimed, 200));
  std::vector<std::future<int>> senders;
  for (int t = 0; t < kSenders; ++t) {
    senders.push_back(std::async(std::launch::async, [&, t] {
      ApiClient own(port);
      int ok = 0;
      for (int i = t; i < heartbeats; i += kSenders) {
        ok += worker_call(own, id, "heartbeat", token_of(claimed)).status == 200 ? 1 : 0;
      }
      return ok;
    }));
  }
  int ok = 0;
  for (auto& f : senders) ok += f.get();
  ASSERT_EQ(ok, heartbeats);
}

TEST_F(EventFiltersTest, AStreamsEventsComeInPagesByVersion) {
  ASSERT_NO_FATAL_FAILURE(job_with_heartbeats(client(), server().port(), "j1", 5));  // versions 1-7

  ApiReply first = client().get("/v1/jobs/j1/events?limit=3");
  ApiReply second = client().get("/v1/jobs/j1/events?after=3&limit=3");
  ApiReply last = client().get("/v1/jobs/j1/events?after=6&limit=3");
  ApiReply past = client().get("/v1/jobs/j1/events?after=7");

  ASSERT_TRUE(IsStatus(first, 200));
  EXPECT_EQ(field_of(first, "version"), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(first.json.value("next_after", -1), 3);
  EXPECT_EQ(field_of(second, "version"), (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(second.json.value("next_after", -1), 6);
  EXPECT_EQ(field_of(last, "version"), (std::vector<int64_t>{7}));
  EXPECT_EQ(last.json.value("next_after", -1), 7);
  EXPECT_TRUE(past.json["events"].empty());
  EXPECT_EQ(past.json.value("next_after", -1), 7);
}

TEST_F(EventFiltersTest, AStreamPageHoldsAThousandEventsUnlessAskedOtherwise) {
  ASSERT_NO_FATAL_FAILURE(
      job_with_heartbeats(client(), server().port(), "j1", 1000));  // 1,002 events

  ApiReply page = client().get("/v1/jobs/j1/events");
  ApiReply rest = client().get("/v1/jobs/j1/events?after=1000");
  ApiReply all = client().get("/v1/jobs/j1/events?limit=10000");

  ASSERT_TRUE(IsStatus(page, 200));
  EXPECT_EQ(page.json["events"].size(), 1000u);
  EXPECT_EQ(page.json.value("next_after", -1), 1000);
  EXPECT_EQ(field_of(rest, "version"), (std::vector<int64_t>{1001, 1002}));
  EXPECT_EQ(all.json["events"].size(), 1002u);
}

TEST_F(EventFiltersTest, BadStreamPagingIs422AndAMissingStream404) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  for (const std::string query :
       {"limit=0", "limit=10001", "limit=x", "after=-1", "after=4294967296"}) {
    EXPECT_TRUE(IsError(client().get("/v1/jobs/j1/events?" + query), 422, "invalid_query"))
        << query;
  }
  EXPECT_TRUE(IsError(client().get("/v1/jobs/nope/events"), 404, "not_found"));
  EXPECT_TRUE(IsError(client().get("/v1/holds/nope/events?after=3"), 404, "not_found"));
}

class EventLogFilterTest : public ServerTest {
 protected:
  // j1: seq 1-3, a hold: 4, j2: 5, a connector: 6.
  void SetUp() override {
    ServerTest::SetUp();
    ASSERT_NO_FATAL_FAILURE(job_with_heartbeats(client(), server().port(), "j1", 1));
    ApiReply hold = client().post(
        "/v1/holds", {{"target", "t9"}, {"kind", "RESULT_UNKNOWN"}, {"reason", "checking"}});
    ASSERT_TRUE(IsStatus(hold, 201));
    hold_ = hold.json.value("id", "");
    ASSERT_TRUE(IsStatus(enqueue(client(), "j2", "t2", "k"), 201));
    ASSERT_TRUE(IsStatus(client().post("/v1/connectors", {{"id", "c1"}, {"name", "n"}}), 201));
  }
  std::string hold_;
};

TEST_F(EventLogFilterTest, AStreamFilterReturnsThatStreamFromAfter) {
  ApiReply all = client().get("/v1/events?stream=job/j1");
  ApiReply after = client().get("/v1/events?stream=job/j1&after=1&limit=1");

  EXPECT_EQ(field_of(all, "seq"), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(all.json.value("next_after", -1), 3);
  EXPECT_EQ(field_of(after, "seq"), (std::vector<int64_t>{2}));
  EXPECT_EQ(after.json.value("next_after", -1), 2);
}

TEST_F(EventLogFilterTest, AKindFilterReturnsEveryStreamOfThatKind) {
  ApiReply jobs = client().get("/v1/events?stream=job/");
  ApiReply holds = client().get("/v1/events?stream=hold/");

  EXPECT_EQ(field_of(jobs, "seq"), (std::vector<int64_t>{1, 2, 3, 5}));
  EXPECT_EQ(text_of(holds, "stream"), std::vector<std::string>{"hold/" + hold_});
}

TEST_F(EventLogFilterTest, TypeFiltersAddUp) {
  ApiReply one = client().get("/v1/events?type=JobEnqueued");
  ApiReply two = client().get("/v1/events?type=JobEnqueued&type=HoldPlaced");
  ApiReply both = client().get("/v1/events?stream=job/j2&type=JobEnqueued");

  EXPECT_EQ(field_of(one, "seq"), (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(field_of(two, "seq"), (std::vector<int64_t>{1, 4, 5}));
  EXPECT_EQ(field_of(both, "seq"), (std::vector<int64_t>{5}));
}

TEST_F(EventLogFilterTest, AFilterThatMatchesNothingSaysHowFarItLooked) {
  ApiReply none = client().get("/v1/events?stream=connector/&after=6");
  ApiReply later = client().get("/v1/events?type=AttemptCancelled&after=2");

  EXPECT_TRUE(none.json["events"].empty());
  EXPECT_EQ(none.json.value("next_after", -1), 6);
  EXPECT_TRUE(later.json["events"].empty());
  EXPECT_GE(later.json.value("next_after", -1), 2);
}

TEST_F(EventLogFilterTest, SinceStartsAtTheFirstEventRecordedThen) {
  const std::vector<json> log = client().all_events();
  ASSERT_EQ(log.size(), 6u);
  const std::string fourth = log[3].value("recorded_at", "");

  ApiReply from = client().get("/v1/events?since=" + fourth);
  ApiReply future = client().get("/v1/events?since=2999-01-01T00:00:00Z");
  ApiReply past = client().get("/v1/events?since=2000-01-01T00:00:00Z&limit=2");

  ASSERT_TRUE(IsStatus(from, 200));
  ASSERT_FALSE(from.json["events"].empty());
  // Every event from the first one recorded at that time on.
  EXPECT_LE(from.json["events"][0].value("seq", 0), 4);
  EXPECT_EQ(from.json["events"].back().value("seq", 0), 6);
  for (const auto& e : from.json["events"]) EXPECT_GE(e.value("recorded_at", ""), fourth);
  EXPECT_TRUE(future.json["events"].empty());
  EXPECT_EQ(field_of(past, "seq"), (std::vector<int64_t>{1, 2}));
}

TEST_F(EventLogFilterTest, BadFiltersAre422) {
  for (const std::string query :
       {"stream=bogus", "stream=job", "stream=job/a%20b", "stream=jobs/j1",
        "stream=", "type=NoSuchEvent", "type=", "since=yesterday", "since=2026-13-01T00:00:00Z"}) {
    EXPECT_TRUE(IsError(client().get("/v1/events?" + query), 422, "invalid_query")) << query;
  }
}

TEST_F(EventFiltersTest, MetricsCountLiveStreamsAndTheEventsSentToThem) {
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  ASSERT_TRUE(IsStatus(enqueue(client(), "j2", "t2", "k"), 201));
  SseReader live(server().port(), "/v1/events/live", "", deadline_in(kReplyWait));
  ASSERT_EQ(live.status(), 200);
  ASSERT_EQ(live.read(2, deadline_in(kReplyWait)).size(), 2u);

  const std::string metrics = client().get("/metrics").body;

  EXPECT_NE(metrics.find("\nrunledger_live_streams 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nrunledger_live_stream_events_total 2\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("# TYPE runledger_live_stream_events_total counter"), std::string::npos);
}

}  // namespace
}  // namespace runledger::testing
