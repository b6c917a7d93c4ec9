// GET /v1/events/live on a real server (docs/api.md "Events"): one SSE
// event per log event with `id:` = its seq and `data:` = the event JSON;
// a reader that reconnects with Last-Event-ID (which wins over ?after=)
// goes on after that seq, with no gap and no duplicate; events appended
// while it listens arrive. All reads are bounded in time.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"
#include "tests/http/sse_reader.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

constexpr auto kStreamWait = std::chrono::seconds(30);

class LiveEventsTest : public ServerTest {
 protected:
  // Enqueues `n` jobs: one event each.
  void append(int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(IsStatus(enqueue(client(), "j" + std::to_string(next_++), "t", "k"), 201));
    }
  }
  int next_ = 1;
};

TEST_F(LiveEventsTest, EachEventCarriesItsSeqAsIdAndItsJsonAsData) {
  ASSERT_NO_FATAL_FAILURE(append(5));
  const std::vector<json> log = client().all_events();
  ASSERT_EQ(log.size(), 5u);

  SseReader live(server().port(), "/v1/events/live", "", deadline_in(kStreamWait));
  ASSERT_EQ(live.status(), 200) << live.head();
  EXPECT_NE(live.head().find("text/event-stream"), std::string::npos) << live.head();
  const auto& events = live.read(5, deadline_in(kStreamWait));

  ASSERT_EQ(data_ids(events), seq_range(1, 5));
  for (size_t i = 0; i < events.size(); ++i) {
    json data = json::parse(events[i].data, nullptr, false);
    ASSERT_FALSE(data.is_discarded()) << events[i].data;
    EXPECT_EQ(data, log[i]);
  }
}

TEST_F(LiveEventsTest, AReconnectResumesAfterLastEventIdWithoutGapsOrDuplicates) {
  ASSERT_NO_FATAL_FAILURE(append(10));
  std::vector<uint64_t> seen;
  {
    SseReader first(server().port(), "/v1/events/live?after=0", "", deadline_in(kStreamWait));
    ASSERT_EQ(first.status(), 200) << first.head();
    // The reader handles events 1..4, then its connection drops.
    auto ids = data_ids(first.read(4, deadline_in(kStreamWait)));
    ASSERT_GE(ids.size(), 4u);
    seen.assign(ids.begin(), ids.begin() + 4);
  }
  ASSERT_NO_FATAL_FAILURE(append(5));  // written while nobody listens

  // The header wins over ?after=: the stream goes on after 4, not after 1.
  SseReader second(server().port(), "/v1/events/live?after=1", "4", deadline_in(kStreamWait));
  ASSERT_EQ(second.status(), 200) << second.head();
  auto resumed = data_ids(second.read(11, deadline_in(kStreamWait)));
  ASSERT_EQ(resumed, seq_range(5, 15));
  // And it keeps listening: an event appended now arrives too.
  ASSERT_NO_FATAL_FAILURE(append(1));
  resumed = data_ids(second.read(12, deadline_in(kStreamWait)));
  seen.insert(seen.end(), resumed.begin(), resumed.end());

  EXPECT_EQ(seen, seq_range(1, 16));
  EXPECT_EQ(client().event_count(), 16u);
}

TEST_F(LiveEventsTest, AfterStartsTheStreamAfterThatSeq) {
  ASSERT_NO_FATAL_FAILURE(append(8));
  SseReader live(server().port(), "/v1/events/live?after=6", "", deadline_in(kStreamWait));
  ASSERT_EQ(live.status(), 200) << live.head();
  EXPECT_EQ(data_ids(live.read(2, deadline_in(kStreamWait))), seq_range(7, 8));
}

TEST_F(LiveEventsTest, ABadResumePointIs422) {
  SseReader by_query(server().port(), "/v1/events/live?after=seven", "", deadline_in(kStreamWait));
  EXPECT_EQ(by_query.status(), 422) << by_query.head();
  SseReader by_header(server().port(), "/v1/events/live", "seven", deadline_in(kStreamWait));
  EXPECT_EQ(by_header.status(), 422) << by_header.head();
}

}  // namespace
}  // namespace runledger::testing
