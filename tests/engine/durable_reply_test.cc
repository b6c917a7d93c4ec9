// Durable before visible (docs/domain.md invariant 4): no reply, and no read,
// leaves the engine before the append that holds its events is acknowledged
// by the store; and a read sent after a write sees that write.
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/engine/engine_harness.h"

namespace runledger::testing {
namespace {

constexpr int kCallers = 16;
constexpr int kCommandsPerCaller = 10;
constexpr auto kSlowAppend = std::chrono::milliseconds(2);

// What one request saw: the seq its render showed, how much of the log was
// durable while it rendered, and how much when its reply came back.
struct Sighting {
  uint64_t seq_rendered = 0;
  uint64_t durable_at_render = 0;
  uint64_t durable_at_reply = 0;
  int status = 0;
};

Sighting watched(EngineHarness& h, std::optional<Command> c) {
  Sighting out;
  Request r = c ? command_request(std::move(*c)) : Request{};
  r.render = [&](const State& s, const Decision* d) {
    out.seq_rendered = s.last_seq;
    out.durable_at_render = h.store().durable_seq();
    return d ? outcome_reply(s, d) : Reply{200, "{}"};
  };
  out.status = h.engine().execute(std::move(r)).status;
  out.durable_at_reply = h.store().durable_seq();
  return out;
}

TEST(DurableBeforeReply, NoReplyOrReadOvertakesTheAppendThatHoldsItsEvents) {
  // Given an engine on a slow disk
  EngineHarness h;
  h.store().set_append_delay(kSlowAppend);
  std::mutex mu;
  std::vector<Sighting> writes, reads;

  // When threads send writes and reads at the same time
  std::vector<std::thread> threads;
  for (int t = 0; t < kCallers; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCommandsPerCaller; ++i) {
        std::string id = "job-" + std::to_string(t) + "-" + std::to_string(i);
        Sighting w = watched(h, Command(enqueue_command(id, "k", "t-" + id)));
        Sighting r = watched(h, std::nullopt);
        std::lock_guard<std::mutex> lk(mu);
        writes.push_back(w);
        reads.push_back(r);
      }
    });
  }
  for (auto& t : threads) t.join();

  // Then each write rendered before its events were durable (so the check
  // below can tell a reply that came too early) and replied only after
  for (const auto& w : writes) {
    EXPECT_EQ(w.status, 200);
    EXPECT_LT(w.durable_at_render, w.seq_rendered);
    EXPECT_GE(w.durable_at_reply, w.seq_rendered);
  }
  // and no read reply showed a seq that was not durable when it returned
  for (const auto& r : reads) EXPECT_GE(r.durable_at_reply, r.seq_rendered);
  // and every event a reply showed lies inside one acknowledged append
  auto records = h.store().records();
  for (const auto& w : writes) {
    bool inside = false;
    for (const auto& rec : records) {
      inside = inside || (rec.first_seq <= w.seq_rendered && w.seq_rendered <= rec.last_seq);
    }
    EXPECT_TRUE(inside) << "seq " << w.seq_rendered << " is in no acknowledged append";
  }
}

TEST(DurableBeforeReply, AReadSentAfterAWriteSeesIt) {
  // Given an engine
  EngineHarness h;
  for (int i = 0; i < 20; ++i) {
    std::string id = "job-" + std::to_string(i);
    // When a job is enqueued and, once that returned, read from another thread
    ASSERT_EQ(run(h.engine(), enqueue_command(id, "k", "t")).status, 200);
    nlohmann::json seen;
    std::thread reader([&] {
      seen = inspect(h.engine(), [&](const State& s) {
        auto it = s.jobs.by_id.find(id);
        return it == s.jobs.by_id.end() ? nlohmann::json() : jobs::view(s, it->second);
      });
    });
    reader.join();
    // Then the read shows it, as the store has it
    ASSERT_FALSE(seen.is_null()) << id;
    EXPECT_EQ(seen["state"], "QUEUED");
    uint32_t version = 0;
    ASSERT_TRUE(h.store().stream_version(job_stream(id), &version).ok());
    EXPECT_EQ(seen["version"], version);
  }
}

}  // namespace
}  // namespace runledger::testing
