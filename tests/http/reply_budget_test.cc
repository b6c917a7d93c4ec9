// The budget of reply bytes in flight (docs/operations.md, Limits): while
// replies not yet taken by their clients are over --reply-bytes-max, reads
// are refused with 503 and Retry-After, health and metrics still answer, the
// refusals are counted; once those clients go, reads are served again and
// the count of bytes in flight is back to 0.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "http/http_counters.h"
#include "tests/http/job_calls.h"
#include "tests/http/raw_connection.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

constexpr auto kBudgetWait = std::chrono::seconds(60);

// A metric's value in /metrics text ("name{labels} value"); -1 when absent.
long long metric_value(const std::string& text, const std::string& series) {
  const std::string key = "\n" + series + " ";
  const size_t at = text.find(key);
  return at == std::string::npos ? -1 : std::stoll(text.substr(at + key.size()));
}

class ReplyBudgetTest : public ServerTest {
 protected:
  std::vector<std::string> initial_flags() const override {
    return {"--reply-bytes-max", std::to_string(kBudgetBytes)};
  }
  static constexpr size_t kBudgetBytes = 1 << 20;
};

TEST_F(ReplyBudgetTest, ReadsOverTheBudgetAre503UntilTheSlowClientsGo) {
  // About 6 MB of events: more than a socket's buffers in the kernel take,
  // and one read of them is over the budget alone.
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(IsStatus(enqueue(client(), "j" + std::to_string(i), "t", "k",
                                 {{"input", {{"blob", std::string(60000, 'x')}}}}),
                         201));
  }
  // Clients that ask for it all and read nothing, with receive buffers of a
  // few KiB: their replies stay with the server.
  std::vector<std::unique_ptr<RawConnection>> stalled;
  for (int i = 0; i < 3; ++i) {
    stalled.push_back(
        std::make_unique<RawConnection>(server().port(), deadline_in(kBudgetWait), 4096));
    ASSERT_TRUE(stalled.back()->send_all(request_head("GET", "/v1/events?after=0&limit=1000"),
                                         deadline_in(kBudgetWait)));
  }
  ApiReply refused;
  const Deadline until = deadline_in(kBudgetWait);
  while (std::chrono::steady_clock::now() < until) {
    refused = client().get("/v1/jobs?limit=1");
    if (refused.status == 503) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(refused.status, 503) << refused.body;
  EXPECT_EQ(refused.json.value("code", ""), "overloaded");
  EXPECT_EQ(refused.header("Retry-After"), "1");
  EXPECT_EQ(client().get("/v1/health").status, 200);
  ApiReply metrics = client().get("/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_GT(metric_value(metrics.body, "runledger_http_reply_bytes"),
            static_cast<long long>(kBudgetBytes));
  EXPECT_GE(metric_value(metrics.body, "runledger_http_refused_total{reason=\"reply_bytes\"}"), 1);
  EXPECT_GE(metric_value(metrics.body, "runledger_http_replies_total{status=\"503\"}"), 1);

  stalled.clear();
  ApiReply served;
  long long in_flight = -1;
  const Deadline again = deadline_in(kBudgetWait);
  while (std::chrono::steady_clock::now() < again) {
    served = client().get("/v1/jobs?limit=1");
    in_flight = metric_value(client().get("/metrics").body, "runledger_http_reply_bytes");
    if (served.status == 200 && in_flight < 4096) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(served.status, 200) << served.body;
  // Only the metrics reply being written may still count.
  EXPECT_LT(in_flight, 4096);
}

// When a burst's memory goes back to the system (http/free_memory.h): once,
// when its last reply is written and enough were written since the last
// time; never while a reply is still in flight.
TEST(ReplyBytesRelease, IsDueOnceWhenTheLastReplyOfABigEnoughBurstIsWritten) {
  http::HttpCounters c;
  constexpr size_t kAfter = 1000;
  c.add_reply_bytes(600);
  c.add_reply_bytes(600);
  EXPECT_FALSE(c.sub_reply_bytes(600, kAfter)) << "another reply is still in flight";
  EXPECT_TRUE(c.sub_reply_bytes(600, kAfter)) << "1,200 bytes written, none in flight";
  c.add_reply_bytes(600);
  EXPECT_FALSE(c.sub_reply_bytes(600, kAfter)) << "600 since the last release: too few";
  c.add_reply_bytes(600);
  EXPECT_TRUE(c.sub_reply_bytes(600, kAfter)) << "1,200 since the last release";
  EXPECT_EQ(c.reply_bytes(), 0u);
}

}  // namespace
}  // namespace runledger::testing
