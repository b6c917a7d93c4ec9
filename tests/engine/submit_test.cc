// Engine::submit: many requests in flight from one thread, each reply
// delivered once it is durable, the next command chained from the
// completion; and a request refused before the queue gets its 503 at once.
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/engine/engine_harness.h"

namespace runledger::testing {
namespace {

constexpr int kJobs = 200;

// One job's W1 lifecycle as a chain of submits: each completion checks its
// reply and submits the next command, on the sequencer thread.
class ChainedJob {
 public:
  ChainedJob(Engine& e, int n, std::function<void(ChainedJob&)> finished)
      : engine_(e),
        id_(fmt::format("chained-{}", n)),
        token_(lease_token(id_)),
        finished_(std::move(finished)) {
    jobs::Enqueue enq = enqueue_command(id_, "kind-" + id_, "target-" + id_);
    plan_ = enq.plan;
    commands_.push_back(std::move(enq));
    commands_.push_back(jobs::Claim{"worker-" + id_, {"kind-" + id_}, 60, token_});
    commands_.push_back(jobs::Start{id_, token_, "handle-" + id_});
    for (const auto& step : plan_) {
      commands_.push_back(jobs::StepStart{id_, step, token_});
      commands_.push_back(jobs::StepDone{id_, step, token_, R"({"rows":1})"});
    }
  }

  void next() {
    if (next_ == commands_.size()) {
      finished_(*this);
      return;
    }
    engine_.submit(command_request(commands_[next_++]), [this](Reply r) {
      if (r.status < 200 || r.status >= 300) {
        error_ = fmt::format("command {}: {} {}", next_, r.status, r.body);
        finished_(*this);
        return;
      }
      next();
    });
  }

  const std::string& id() const { return id_; }
  const std::string& error() const { return error_; }
  size_t commands() const { return commands_.size(); }

 private:
  Engine& engine_;
  std::string id_;
  std::string token_;
  std::function<void(ChainedJob&)> finished_;
  std::vector<std::string> plan_;
  std::vector<Command> commands_;
  size_t next_ = 0;
  std::string error_;
};

// The type of the last event in a job's stream (finished jobs leave memory).
std::string last_event_type(EventStore& store, const std::string& id) {
  std::string type;
  Status st = store.read_stream(job_stream(id), 0, [&](const fb::Event& e, std::string_view) {
    type = std::string(event_type_name(e.payload_type()));
    return true;
  });
  return st.ok() ? type : st.ToString();
}

TEST(Submit, ManyChainedLifecyclesFromOneThreadAllSucceedAndShareFsyncs) {
  // Given an engine and 200 job lifecycles chained through completions
  EngineHarness h;
  std::mutex mu;
  std::condition_variable cv;
  int finished = 0;
  std::vector<std::string> errors;
  std::vector<std::unique_ptr<ChainedJob>> jobs;
  for (int n = 0; n < kJobs; ++n) {
    jobs.push_back(std::make_unique<ChainedJob>(h.engine(), n, [&](ChainedJob& j) {
      std::lock_guard<std::mutex> lk(mu);
      if (!j.error().empty()) errors.push_back(j.id() + ": " + j.error());
      ++finished;
      cv.notify_all();
    }));
  }
  // When one thread starts them all without waiting
  for (auto& j : jobs) j->next();
  {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return finished == kJobs; });
  }
  // Then every reply was a success and every job SUCCEEDED
  EXPECT_TRUE(errors.empty()) << errors.size() << " failed, first: " << errors.front();
  for (auto& j : jobs) EXPECT_EQ(last_event_type(h.store(), j->id()), "AttemptSucceeded");
  // and the commands shared writes: far fewer appends than commands
  size_t appends = 0;
  for (const auto& r : h.store().records()) appends += r.events > 0;
  const size_t commands = kJobs * jobs.front()->commands();
  EXPECT_LT(appends, commands);
}

TEST(Submit, ARequestAfterShutdownGets503AtOnceOnTheCallersThread) {
  // Given an engine that was shut down
  EngineHarness h;
  h.engine().shutdown();
  // When a request is submitted
  std::optional<Reply> got;
  h.engine().submit(command_request(enqueue_command("late", "k", "t")),
                    [&](Reply r) { got = std::move(r); });
  // Then its completion already ran, with a 503
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, 503);
  EXPECT_EQ(body_json(*got).value("code", ""), "unavailable");
}

}  // namespace
}  // namespace runledger::testing
