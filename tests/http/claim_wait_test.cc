// Claims that wait for work (`wait_s`, docs/api.md "Jobs") on a real
// runledgerd: answered as soon as a job is ready for them (enqueued, or its
// not_before passed), the oldest waiting claim first, 204 once the wait is
// over, each kind in its own line; a keyed claim keeps only its final
// reply; a stop answers the claims that wait; bad waits are 422.
#include <chrono>
#include <ctime>
#include <future>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/http/job_calls.h"
#include "tests/http/server_fixture.h"

namespace runledger::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using ClaimWaitTest = ServerTest;
using WaitClock = std::chrono::steady_clock;

struct TimedReply {
  ApiReply reply;
  std::chrono::milliseconds took;
};

// A claim of `kind` that waits up to `wait_s`, sent from its own thread and
// client; `key`, when given, as its Idempotency-Key.
std::future<TimedReply> waiting_claim(int port, const std::string& worker, const std::string& kind,
                                      int wait_s, const std::string& key = "") {
  return std::async(std::launch::async, [=] {
    ApiClient c(port);
    Headers headers;
    if (!key.empty()) headers.emplace_back("Idempotency-Key", key);
    const auto start = WaitClock::now();
    ApiReply r = c.post(
        "/v1/jobs/claim",
        {{"worker", worker}, {"kinds", {kind}}, {"lease_s", kTestLeaseS}, {"wait_s", wait_s}},
        headers);
    return TimedReply{std::move(r), std::chrono::duration_cast<std::chrono::milliseconds>(
                                        WaitClock::now() - start)};
  });
}

// Waits until `n` claims are parked on the server (runledger_claims_waiting),
// so that what a test does next meets them waiting, in the order sent.
::testing::AssertionResult parked(ApiClient& c, long n) {
  long now = -1;
  for (const auto until = WaitClock::now() + 20s; WaitClock::now() < until;) {
    now = metric_value(c, "runledger_claims_waiting");
    if (now == n) return ::testing::AssertionSuccess();
    std::this_thread::sleep_for(10ms);
  }
  return ::testing::AssertionFailure() << n << " claims never waited at once; last seen " << now;
}

TEST_F(ClaimWaitTest, AWaitingClaimGetsAJobTheMomentItIsEnqueued) {
  auto claim = waiting_claim(server().port(), "w1", "k", 20);
  ASSERT_TRUE(parked(client(), 1));
  ASSERT_EQ(claim.wait_for(0ms), std::future_status::timeout) << "it did not wait";

  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  TimedReply got = claim.get();
  EXPECT_TRUE(parked(client(), 0));  // answered, it waits no more

  ASSERT_TRUE(IsStatus(got.reply, 200));
  EXPECT_EQ(got.reply.json["job"].value("id", ""), "j1");
  EXPECT_EQ(token_of(got.reply).size(), 32u);
  // Far sooner than its 20 s: the enqueue woke it.
  EXPECT_LT(got.took, 10s);
  EXPECT_EQ(job_view(client(), "j1").value("state", ""), "LEASED");
}

TEST_F(ClaimWaitTest, AClaimThatFindsNothingIs204AfterItsWait) {
  auto claim = waiting_claim(server().port(), "w1", "k", 1);

  TimedReply got = claim.get();

  EXPECT_EQ(got.reply.status, 204) << got.reply.body;
  EXPECT_GE(got.took, 1s);
  EXPECT_LT(got.took, 10s);
}

TEST_F(ClaimWaitTest, TheOldestWaitingClaimIsServedFirst) {
  auto oldest = waiting_claim(server().port(), "w-old", "k", 3);
  ASSERT_TRUE(parked(client(), 1));
  auto newest = waiting_claim(server().port(), "w-new", "k", 3);
  ASSERT_TRUE(parked(client(), 2));

  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));

  TimedReply first = oldest.get();
  TimedReply second = newest.get();
  ASSERT_TRUE(IsStatus(first.reply, 200));
  EXPECT_EQ(first.reply.json["job"]["lease"].value("worker", ""), "w-old");
  EXPECT_EQ(second.reply.status, 204) << second.reply.body;
}

TEST_F(ClaimWaitTest, ClaimsOfAnotherKindDoNotHoldALineUp) {
  auto for_a = waiting_claim(server().port(), "wa", "a", 3);
  ASSERT_TRUE(parked(client(), 1));
  auto for_b = waiting_claim(server().port(), "wb", "b", 20);
  ASSERT_TRUE(parked(client(), 2));

  ASSERT_TRUE(IsStatus(enqueue(client(), "jb", "tb", "b"), 201));

  TimedReply b = for_b.get();
  ASSERT_TRUE(IsStatus(b.reply, 200));
  EXPECT_EQ(b.reply.json["job"].value("id", ""), "jb");
  EXPECT_LT(b.took, 10s);
  EXPECT_EQ(for_a.get().reply.status, 204);
}

TEST_F(ClaimWaitTest, AJobWhoseNotBeforePassesGoesToTheWaitingClaim) {
  // A job due in a moment: no event marks the moment it becomes ready.
  const auto due = std::chrono::system_clock::now() + 1500ms;
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(due.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  gmtime_r(&secs, &utc);
  char text[40];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  const std::string not_before =
      std::string(text) + "." + std::to_string(1000 + ms % 1000).substr(1) + "Z";
  auto waiting = waiting_claim(server().port(), "w1", "k", 20);
  ASSERT_TRUE(parked(client(), 1));
  ASSERT_TRUE(IsStatus(enqueue(client(), "j3", "t3", "k", {{"not_before", not_before}}), 201));

  TimedReply got = waiting.get();
  ASSERT_TRUE(IsStatus(got.reply, 200));
  EXPECT_EQ(got.reply.json["job"].value("id", ""), "j3");
  EXPECT_LT(got.took, 10s);
}

TEST_F(ClaimWaitTest, AKeyedWaitingClaimKeepsItsFinalReplyOnly) {
  // A claim that waited in vain keeps its 204: its retry claims nothing.
  TimedReply empty = waiting_claim(server().port(), "w1", "k", 1, "wait-1").get();
  ASSERT_EQ(empty.reply.status, 204);
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  TimedReply replay = waiting_claim(server().port(), "w1", "k", 1, "wait-1").get();
  EXPECT_EQ(replay.reply.status, 204);
  EXPECT_EQ(job_view(client(), "j1").value("state", ""), "QUEUED");

  // One that waited and then got a job keeps that job: its retry gets the same lease.
  auto served = waiting_claim(server().port(), "w2", "k2", 20, "wait-2");
  ASSERT_TRUE(parked(client(), 1));
  ASSERT_TRUE(IsStatus(enqueue(client(), "j2", "t2", "k2"), 201));
  TimedReply first = served.get();
  ASSERT_TRUE(IsStatus(first.reply, 200));
  TimedReply again = waiting_claim(server().port(), "w2", "k2", 20, "wait-2").get();
  EXPECT_EQ(again.reply.body, first.reply.body);
}

TEST_F(ClaimWaitTest, AStopAnswersTheClaimsThatWait) {
  auto waiting = waiting_claim(server().port(), "w1", "k", 30);
  ASSERT_TRUE(parked(client(), 1));

  EXPECT_EQ(server().terminate(), 0) << server().log();

  ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
  const int status = waiting.get().reply.status;
  EXPECT_TRUE(status == 204 || status == 503) << status;
}

TEST_F(ClaimWaitTest, AWaitOutsideZeroToThirtySecondsIs422) {
  for (const json& wait : {json(31), json(-1), json("5"), json(1.5)}) {
    ApiReply r = client().post("/v1/jobs/claim", {{"worker", "w1"}, {"wait_s", wait}});
    EXPECT_TRUE(IsError(r, 422, "invalid_field")) << wait;
  }
  // 0 waits not at all.
  EXPECT_EQ(client().post("/v1/jobs/claim", {{"worker", "w1"}, {"wait_s", 0}}).status, 204);
}

class ClaimWaitCapTest : public ServerTest {
 protected:
  std::vector<std::string> initial_flags() const override { return {"--waiting-claims-max", "1"}; }
};

TEST_F(ClaimWaitCapTest, AClaimBeyondTheWaitingBoundIs503AtOnce) {
  auto waiting = waiting_claim(server().port(), "w1", "k", 5);
  ASSERT_TRUE(parked(client(), 1));

  TimedReply beyond = waiting_claim(server().port(), "w2", "k", 20).get();

  EXPECT_TRUE(IsError(beyond.reply, 503, "overloaded"));
  EXPECT_LT(beyond.took, 5s);
  ASSERT_TRUE(IsStatus(enqueue(client(), "j1", "t1", "k"), 201));
  EXPECT_EQ(waiting.get().reply.status, 200);
}

}  // namespace
}  // namespace runledger::testing
