// Live event streams served on the event loop (docs/api.md "Live events",
// docs/operations.md "Limits"): a thousand readers at once each get every
// event, in order, once; a reader that stops reading is ended when its
// buffer is full while the others go on, and resumes from its last id with
// no gap; a reader far behind catches up in pieces while the log grows; a
// stop ends each stream with its reason, and a reader resumes after the
// restart with no gap and no duplicate.
#include <sys/socket.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/http/job_calls.h"
#include "tests/http/raw_connection.h"
#include "tests/http/server_fixture.h"
#include "tests/http/sse_reader.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

constexpr auto kFanoutWait = std::chrono::seconds(60);

class LiveFanoutTest : public ServerTest {
 protected:
  // Enqueues `n` jobs (one event each), with `input_bytes` of input each.
  void append(int n, size_t input_bytes = 0) {
    for (int i = 0; i < n; ++i) {
      json extra = json::object();
      if (input_bytes > 0) extra["input"] = {{"blob", std::string(input_bytes, 'x')}};
      ASSERT_TRUE(IsStatus(enqueue(client(), "j" + std::to_string(next_++), "t", "k", extra), 201));
    }
  }
  // Waits until runledger_live_streams is `n`; its last value.
  long wait_streams(long n) {
    const Deadline until = deadline_in(kFanoutWait);
    long now = metric_value(client(), "runledger_live_streams");
    while (now != n && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      now = metric_value(client(), "runledger_live_streams");
    }
    return now;
  }
  // Enqueues `n` jobs from `threads` clients at once (their commits grouped).
  void append_at_once(int n, int threads) {
    std::vector<std::thread> senders;
    std::atomic<int> refused{0};
    for (int t = 0; t < threads; ++t) {
      senders.emplace_back([&, t] {
        ApiClient own(server().port());
        for (int i = t; i < n; i += threads) {
          if (enqueue(own, "p" + std::to_string(next_) + "-" + std::to_string(i), "t", "k")
                  .status != 201) {
            ++refused;
          }
        }
      });
    }
    for (auto& s : senders) s.join();
    next_ += 1;
    ASSERT_EQ(refused.load(), 0);
  }
  int next_ = 1;
};

TEST_F(LiveFanoutTest, AThousandReadersAtOnceEachGetEveryEventInOrderOnce) {
  constexpr size_t kReaders = 1000;
  ASSERT_NO_FATAL_FAILURE(append(3));
  std::vector<std::unique_ptr<SseReader>> readers;
  for (size_t i = 0; i < kReaders; ++i) {
    readers.push_back(std::make_unique<SseReader>(server().port(), "/v1/events/live?after=0", "",
                                                  deadline_in(kFanoutWait)));
    ASSERT_EQ(readers.back()->status(), 200) << i << ": " << readers.back()->head();
  }
  EXPECT_EQ(wait_streams(kReaders), static_cast<long>(kReaders));

  ASSERT_NO_FATAL_FAILURE(append(7));

  for (size_t i = 0; i < kReaders; ++i) {
    ASSERT_EQ(data_ids(readers[i]->read(10, deadline_in(kFanoutWait))), seq_range(1, 10)) << i;
  }
  EXPECT_GE(metric_value(client(), "runledger_live_stream_events_total"),
            static_cast<long>(kReaders * 10));
  readers.clear();
  EXPECT_EQ(wait_streams(0), 0);
}

TEST_F(LiveFanoutTest, AReaderThatStopsReadingIsEndedWhileOthersGoOnAndResumesWithoutAGap) {
  // A receive buffer of a few KiB, never read: the server's bytes pile up
  // on its side.
  RawConnection stalled(server().port(), deadline_in(kFanoutWait), 4096);
  ASSERT_TRUE(
      stalled.send_all(request_head("GET", "/v1/events/live?after=0"), deadline_in(kFanoutWait)));
  SseReader reading(server().port(), "/v1/events/live?after=0", "", deadline_in(kFanoutWait));
  ASSERT_EQ(reading.status(), 200);
  ASSERT_EQ(wait_streams(2), 2);

  // About 6 MiB of events: more than a reader's buffer and the kernel's socket buffers.
  constexpr int kEvents = 96;
  std::vector<uint64_t> read_meanwhile;
  std::thread reader(
      [&] { read_meanwhile = data_ids(reading.read(kEvents, deadline_in(kFanoutWait))); });
  append(kEvents, 60 * 1024);
  reader.join();

  EXPECT_EQ(read_meanwhile, seq_range(1, kEvents));
  // The stalled one is ended (buffer bound or write timeout), the other stays.
  EXPECT_EQ(wait_streams(1), 1);

  // What the stalled reader got is whole events up to some id; it resumes after it.
  std::string got;
  stalled.read_until(&got, deadline_in(kFanoutWait), [](const std::string&) { return false; });
  uint64_t last_whole = 0;
  for (size_t at = got.find("id: "); at != std::string::npos; at = got.find("id: ", at + 1)) {
    const size_t data_end = got.find("\n\n", at);
    if (data_end == std::string::npos) break;
    last_whole = std::stoull(got.substr(at + 4));
  }
  EXPECT_LT(last_whole, static_cast<uint64_t>(kEvents));
  SseReader resumed(server().port(), "/v1/events/live", std::to_string(last_whole),
                    deadline_in(kFanoutWait));
  ASSERT_EQ(resumed.status(), 200);
  EXPECT_EQ(data_ids(resumed.read(kEvents - last_whole, deadline_in(kFanoutWait))),
            seq_range(last_whole + 1, kEvents));
}

TEST_F(LiveFanoutTest, AnEndQueuedBehindAWriteInFlightArrivesWhole) {
  // Not read while about 6 MiB of events are sent: the server's write to it
  // is in flight, and its buffer bound ends it, when the end is queued.
  SseReader slow(server().port(), "/v1/events/live?after=0", "", deadline_in(kFanoutWait), 4096);
  ASSERT_EQ(slow.status(), 200);
  ASSERT_EQ(wait_streams(1), 1);
  constexpr int kEvents = 96;
  append(kEvents, 60 * 1024);

  const std::vector<SseEvent>& got = slow.read(kEvents + 1, deadline_in(kFanoutWait));
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back().event, "end");
  EXPECT_EQ(got.back().data, R"({"reason":"reader too slow to keep up; resume from the last id"})");
  const std::vector<uint64_t> ids = data_ids(got);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids, seq_range(1, ids.back()));
  EXPECT_LT(ids.back(), static_cast<uint64_t>(kEvents));
}

TEST_F(LiveFanoutTest, AReaderFarBehindCatchesUpInPiecesWhileTheLogGrows) {
  // More than one read's worth (1,000 events) behind.
  constexpr int kBefore = 2100;
  constexpr int kDuring = 300;
  ASSERT_NO_FATAL_FAILURE(append_at_once(kBefore, 16));
  SseReader behind(server().port(), "/v1/events/live?after=0", "", deadline_in(kFanoutWait));
  ASSERT_EQ(behind.status(), 200);
  ASSERT_NO_FATAL_FAILURE(append_at_once(kDuring, 16));

  EXPECT_EQ(data_ids(behind.read(kBefore + kDuring, deadline_in(kFanoutWait))),
            seq_range(1, kBefore + kDuring));
}

TEST_F(LiveFanoutTest, AStopEndsEachStreamWithItsReasonAndARestartResumesWithoutGapOrDuplicate) {
  ASSERT_NO_FATAL_FAILURE(append(4));
  SseReader before(server().port(), "/v1/events/live?after=0", "", deadline_in(kFanoutWait));
  ASSERT_EQ(before.status(), 200);
  ASSERT_EQ(data_ids(before.read(4, deadline_in(kFanoutWait))), seq_range(1, 4));

  // The reader goes on reading while the server stops, as a client does.
  std::vector<SseEvent> last;
  std::thread reading([&] { last = before.read(5, deadline_in(kFanoutWait)); });
  restart();
  reading.join();
  ASSERT_EQ(last.size(), 5u);
  EXPECT_EQ(last.back().event, "end");
  EXPECT_NE(last.back().data.find("shutting down"), std::string::npos) << last.back().data;

  ASSERT_NO_FATAL_FAILURE(append(3));
  SseReader after(server().port(), "/v1/events/live", "4", deadline_in(kFanoutWait));
  ASSERT_EQ(after.status(), 200);
  EXPECT_EQ(data_ids(after.read(3, deadline_in(kFanoutWait))), seq_range(5, 7));
}

class LiveStreamsCapTest : public ServerTest {
 protected:
  std::vector<std::string> initial_flags() const override { return {"--live-streams-max", "2"}; }
};

TEST_F(LiveStreamsCapTest, OneStreamBeyondTheNamedLimitIs503AndASlotFreedIsTakenAgain) {
  auto a =
      std::make_unique<SseReader>(server().port(), "/v1/events/live", "", deadline_in(kFanoutWait));
  SseReader b(server().port(), "/v1/events/live", "", deadline_in(kFanoutWait));
  SseReader c(server().port(), "/v1/events/live", "", deadline_in(kFanoutWait));
  EXPECT_EQ(a->status(), 200);
  EXPECT_EQ(b.status(), 200);
  EXPECT_EQ(c.status(), 503) << c.head();

  a.reset();
  const Deadline until = deadline_in(kFanoutWait);
  int status = 0;
  while (status != 200 && std::chrono::steady_clock::now() < until) {
    SseReader d(server().port(), "/v1/events/live", "", deadline_in(kFanoutWait));
    status = d.status();
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(status, 200);
}

}  // namespace
}  // namespace runledger::testing
