// Lease expiry (docs/domain.md 1.4): the engine records an expired lease as an
// event from `system`. A LEASED attempt is queued again, a RUNNING one turns
// STALE with an EXECUTION_STATE_UNKNOWN hold on its target. With a ManualClock
// time moves by tick(); one test runs the real timer on the system clock.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "engine/state_loader.h"
#include "tests/engine/engine_harness.h"
#include "tests/engine/state_digest.h"

namespace runledger::testing {
namespace {

constexpr int64_t kLeaseS = 30;

nlohmann::json job_view(Engine& e, const std::string& id) {
  return inspect(e, [&](const State& s) {
    auto it = s.jobs.by_id.find(id);
    return it == s.jobs.by_id.end() ? nlohmann::json() : jobs::view(s, it->second);
  });
}

// The stream's events as (type, actor) pairs.
std::vector<std::pair<std::string, std::string>> events_of(EventStore& store,
                                                           const std::string& stream) {
  std::vector<std::pair<std::string, std::string>> out;
  Status st = store.read_stream(stream, 0, [&](const fb::Event& e, std::string_view) {
    out.emplace_back(std::string(event_type_name(e.payload_type())), e.actor()->str());
    return true;
  });
  EXPECT_TRUE(st.ok()) << st.ToString();
  return out;
}

class LeaseExpiry : public ::testing::Test {
 protected:
  void claim(const std::string& id, const std::string& token) {
    ASSERT_EQ(run(h.engine(), enqueue_command(id, "k-" + id, "t")).status, 200);
    Reply r = run(h.engine(), jobs::Claim{"w-" + id, {"k-" + id}, kLeaseS, token});
    ASSERT_EQ(claimed_job(r), id) << r.body;
  }
  EngineHarness h;
};

TEST_F(LeaseExpiry, ALeaseIsNotExpiredBeforeItsTime) {
  // Given a job leased for 30 s
  claim("j", lease_token("j"));
  // When 29 s pass and the timer fires
  h.clock.advance_ms((kLeaseS - 1) * kMsPerS);
  h.engine().tick();
  // Then it is still LEASED and nothing was recorded
  EXPECT_EQ(job_view(h.engine(), "j")["state"], "LEASED");
  EXPECT_EQ(events_of(h.store(), "job/j").size(), 2u);
}

TEST_F(LeaseExpiry, AnExpiredLeasedAttemptIsQueuedAgainAndTheOldTokenIsDead) {
  // Given a job leased for 30 s, not started
  std::string old_token = lease_token("old");
  claim("j", old_token);
  // When 31 s pass and the timer fires
  h.clock.advance_ms((kLeaseS + 1) * kMsPerS);
  h.engine().tick();
  // Then the same attempt is QUEUED again, recorded by `system`
  auto view = job_view(h.engine(), "j");
  EXPECT_EQ(view["state"], "QUEUED");
  EXPECT_EQ(view["attempt"], 1);
  auto events = events_of(h.store(), "job/j");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2], std::make_pair(std::string("LeaseExpired"), std::string("system")));
  // and the old token starts nothing, while a new claim takes the job
  EXPECT_EQ(run(h.engine(), jobs::Start{"j", old_token, ""}).status, 409);
  std::string token = lease_token("new");
  Reply r = run(h.engine(), jobs::Claim{"w2", {}, kLeaseS, token});
  EXPECT_EQ(claimed_job(r), "j");
  EXPECT_EQ(run(h.engine(), jobs::Start{"j", token, ""}).status, 200);
}

TEST_F(LeaseExpiry, AnExpiredLeaseWithACancelRequestedEndsCancelled) {
  // Given a leased job whose cancel was requested
  claim("j", lease_token("j"));
  ASSERT_EQ(run(h.engine(), jobs::Cancel{"j", "not needed"}).status, 200);
  // When the lease runs out
  h.clock.advance_ms((kLeaseS + 1) * kMsPerS);
  h.engine().tick();
  // Then the attempt is CANCELLED and the job left memory
  EXPECT_TRUE(job_view(h.engine(), "j").is_null());
  std::string view;
  ASSERT_TRUE(h.store().get_view("job/j", &view).ok());
  EXPECT_EQ(nlohmann::json::parse(view)["state"], "CANCELLED");
}

TEST_F(LeaseExpiry, AnExpiredRunningAttemptGoesStaleAndItsHoldBlocksTheTarget) {
  // Given a running job and another job queued for the same target
  std::string token = lease_token("j");
  claim("j", token);
  ASSERT_EQ(run(h.engine(), jobs::Start{"j", token, "pid-42"}).status, 200);
  ASSERT_EQ(run(h.engine(), enqueue_command("next", "k-next", "t")).status, 200);
  // When its lease runs out
  h.clock.advance_ms((kLeaseS + 1) * kMsPerS);
  h.engine().tick();
  // Then the attempt is STALE
  auto view = job_view(h.engine(), "j");
  EXPECT_EQ(view["state"], "STALE");
  // and an EXECUTION_STATE_UNKNOWN hold on its target names it
  auto hold = inspect(h.engine(), [](const State& s) {
    const holds::Hold* b = holds::blocking_hold(s, "t");
    return b ? holds::view(*b) : nlohmann::json();
  });
  ASSERT_FALSE(hold.is_null());
  EXPECT_EQ(hold["kind"], holds::kExecutionStateUnknown);
  EXPECT_EQ(hold["job"], "j");
  EXPECT_EQ(hold["attempt"], 1);
  EXPECT_EQ(hold["placed_by"], "system");
  // and the other job of the target is not handed out, and says why
  Reply claimed = run(h.engine(), jobs::Claim{"w2", {}, kLeaseS, lease_token("w2")});
  EXPECT_EQ(claimed.status, 200);
  EXPECT_TRUE(body_json(claimed)["events"].empty()) << claimed.body;
  EXPECT_EQ(job_view(h.engine(), "next")["blocked_by"]["hold"], hold["id"]);
  // When the hold is released with evidence of how the attempt ended
  std::string hold_id = hold["id"].get<std::string>();
  ASSERT_EQ(run(h.engine(), holds::ReleaseHold{hold_id, "container gone, no output", true,
                                               std::string("FAILED")})
                .status,
            200);
  // Then the attempt is FAILED and the other job can be claimed
  std::string stored;
  ASSERT_TRUE(h.store().get_view("job/j", &stored).ok());
  EXPECT_EQ(nlohmann::json::parse(stored)["state"], "FAILED");
  Reply next = run(h.engine(), jobs::Claim{"w2", {}, kLeaseS, lease_token("w2")});
  EXPECT_EQ(claimed_job(next), "next");
  // and memory equals a replay of the log
  State replayed;
  LoadReport report;
  ASSERT_TRUE(load_state(h.store(), LoadOptions{}, &replayed, &report).ok());
  auto live = engine_digest(h.engine());
  EXPECT_TRUE(same_state(state_digest(replayed), live));
}

TEST_F(LeaseExpiry, AHeartbeatKeepsTheLeaseAlive) {
  // Given a running job that heartbeats every 20 s of a 30 s lease
  std::string token = lease_token("j");
  claim("j", token);
  ASSERT_EQ(run(h.engine(), jobs::Start{"j", token, ""}).status, 200);
  for (int i = 0; i < 5; ++i) {
    h.clock.advance_ms(20 * kMsPerS);
    h.engine().tick();
    ASSERT_EQ(run(h.engine(), jobs::Heartbeat{"j", token, std::nullopt}).status, 200) << i;
  }
  // Then after 100 s it is still RUNNING
  EXPECT_EQ(job_view(h.engine(), "j")["state"], "RUNNING");
}

// Leases `n` jobs (one target each) for kLeaseS from several threads.
void lease_many(Engine& e, int n) {
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&e, n, t] {
      for (int i = t; i < n; i += kThreads) {
        std::string id = "j" + std::to_string(i);
        ASSERT_EQ(run(e, enqueue_command(id, "k", "t-" + id)).status, 200);
        ASSERT_NE(claimed_job(run(e, jobs::Claim{"w", {"k"}, kLeaseS, lease_token(id)})), "");
      }
    });
  }
  for (auto& t : threads) t.join();
}

size_t count_in_state(Engine& e, jobs::AttemptState state) {
  return inspect(e, [state](const State& s) {
    auto it = s.jobs.count_by_state.find(jobs::to_string(state));
    return it == s.jobs.count_by_state.end() ? size_t{0} : it->second;
  });
}

TEST_F(LeaseExpiry, OneTickExpiresAtMostItsShareAndTheNextTheRest) {
  // Given more leases due at once than one expiry command takes
  const int n = static_cast<int>(jobs::kExpiriesPerCommandMax) + 44;
  lease_many(h.engine(), n);
  h.clock.advance_ms((kLeaseS + 1) * kMsPerS);
  // When the timer fires once
  h.engine().tick();
  // Then exactly kExpiriesPerCommandMax were expired, and the rest are still due
  EXPECT_EQ(count_in_state(h.engine(), jobs::AttemptState::kQueued), jobs::kExpiriesPerCommandMax);
  EXPECT_EQ(count_in_state(h.engine(), jobs::AttemptState::kLeased),
            static_cast<size_t>(n) - jobs::kExpiriesPerCommandMax);
  // When it fires again, the rest are expired
  h.engine().tick();
  EXPECT_EQ(count_in_state(h.engine(), jobs::AttemptState::kQueued), static_cast<size_t>(n));
}

TEST(LeaseExpiryTimer, TheTimerKeepsExpiringWhileLeasesAreStillDue) {
  // Given an engine with its timers on, and more leases than one expiry takes
  EngineOptions o = test_engine_options();
  o.timers = true;
  EngineHarness h(o);
  const int n = static_cast<int>(jobs::kExpiriesPerCommandMax) * 2 + 10;
  lease_many(h.engine(), n);
  // When they all come due at once
  h.clock.advance_ms((kLeaseS + 1) * kMsPerS);
  // Then the timer expires every one of them without a request (polled for up to 10 s)
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (count_in_state(h.engine(), jobs::AttemptState::kQueued) < static_cast<size_t>(n) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(count_in_state(h.engine(), jobs::AttemptState::kQueued), static_cast<size_t>(n));
  EXPECT_EQ(count_in_state(h.engine(), jobs::AttemptState::kLeased), 0u);
}

TEST(LeaseExpiryTimer, TheEngineTimerRecordsAnExpiredLeaseOnItsOwn) {
  // Given an engine with its timers on, on the system clock
  SystemClock clock;
  EngineOptions o = test_engine_options();
  o.timers = true;
  EngineHarness h(o, &clock);
  ASSERT_EQ(run(h.engine(), enqueue_command("j", "k", "t")).status, 200);
  // When a job is leased for 1 s and nobody sends anything
  ASSERT_EQ(run(h.engine(), jobs::Claim{"w", {}, 1, lease_token("j")}).status, 200);
  // Then the expiry is recorded without a request (polled for up to 10 s)
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string state = "LEASED";
  while (state == "LEASED" && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    state = job_view(h.engine(), "j")["state"].get<std::string>();
  }
  EXPECT_EQ(state, "QUEUED");
  auto events = events_of(h.store(), "job/j");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2], std::make_pair(std::string("LeaseExpired"), std::string("system")));
}

}  // namespace
}  // namespace runledger::testing
