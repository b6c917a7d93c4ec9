// A failed write (docs/domain.md invariants 3 and 5, DESIGN "the write path"): the
// commands of the failed batch get 503 and leave nothing in the log, the
// engine rebuilds its state from the log (no half-applied command stays in
// memory), takes writes again, and its state equals a replay of the log.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "engine/state_loader.h"
#include "events/log_verifier.h"
#include "tests/engine/engine_harness.h"
#include "tests/engine/state_digest.h"

namespace runledger::testing {
namespace {

std::string job_state(Engine& e, const std::string& id) {
  return inspect(e, [&](const State& s) {
    auto it = s.jobs.by_id.find(id);
    return it == s.jobs.by_id.end() ? std::string("absent")
                                    : std::string(jobs::to_string(it->second.latest().state));
  });
}

TEST(WriteFailure, TheFailedCommandGets503AndNothingOfItIsInTheLog) {
  // Given an engine with one job in its log
  EngineHarness h;
  ASSERT_EQ(run(h.engine(), enqueue_command("a", "k", "t-a")).status, 200);
  uint64_t before = h.store().last_seq();

  // When the next append fails
  h.faults().fail_next_appends(1);
  Reply r = run(h.engine(), enqueue_command("b", "k", "t-b"));

  // Then the command gets 503 `unavailable`
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(body_json(r).value("code", ""), "unavailable");
  // and nothing of it reached the log or the memory
  EXPECT_EQ(h.store().last_seq(), before);
  uint32_t version = 7;
  ASSERT_TRUE(h.store().stream_version(job_stream("b"), &version).ok());
  EXPECT_EQ(version, 0u);
  EXPECT_EQ(job_state(h.engine(), "b"), "absent");
  // and, the rebuild done (a read runs after it on the sequencer), the engine
  // is healthy again and takes the same command
  EXPECT_TRUE(h.engine().writable());
  EXPECT_EQ(h.engine().unavailable_reason(), "");
  EXPECT_EQ(run(h.engine(), enqueue_command("b", "k", "t-b")).status, 200);
  EXPECT_EQ(job_state(h.engine(), "b"), "QUEUED");
  EXPECT_TRUE(same_state(loaded_digest(h.store(), false), engine_digest(h.engine())));
}

TEST(WriteFailure, ACommitInDoubtSaysSoAndARetryWithItsKeyTellsWhatHappened) {
  // Given an engine whose next append is written but never confirmed
  EngineHarness h;
  h.faults().doubt_next_appends(1);
  // When a keyed enqueue is sent
  Reply r = h.engine().execute(keyed_request(enqueue_command("b", "k", "t-b"), "key-b", "enqueue"));
  // Then it gets 503, which does not claim that nothing changed
  EXPECT_EQ(r.status, 503);
  const std::string error = body_json(r).value("error", "");
  EXPECT_NE(error.find("may or may not have been committed"), std::string::npos) << error;
  EXPECT_EQ(error.find("nothing was changed"), std::string::npos) << error;
  // and the rebuild from the log finds the command there, which the same
  // key's retry tells, without running it twice
  EXPECT_EQ(job_state(h.engine(), "b"), "QUEUED");
  const uint64_t seq = h.store().last_seq();
  Reply again =
      h.engine().execute(keyed_request(enqueue_command("b", "k", "t-b"), "key-b", "enqueue"));
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(h.store().last_seq(), seq);
}

TEST(WriteFailure, AReadDecidedOnTopOfAFailedWriteIsAnsweredFromTheRebuiltState) {
  // Given a job in the log, and a write that hangs, then fails
  EngineHarness h;
  ASSERT_EQ(run(h.engine(), enqueue_command("a", "k", "t-a")).status, 200);
  h.faults().pause_appends();
  h.faults().fail_next_appends(1);
  Reply write;
  std::thread writing([&] { write = run(h.engine(), enqueue_command("b", "k", "t-b")); });
  while (h.faults().appends_waiting() == 0) std::this_thread::yield();
  // When a read is decided while that write waits (on top of its effects)
  Reply read;
  std::thread reading([&] {
    read = h.engine().read([](const State& s, const Decision*) {
      return Reply{200, s.jobs.by_id.count("b") != 0 ? "b" : "no b"};
    });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // decided, waiting for the write
  h.faults().resume_appends();
  writing.join();
  reading.join();
  // Then the write fails, and the read is answered from the state rebuilt
  // from the log, without the failed write's job
  EXPECT_EQ(write.status, 503);
  EXPECT_EQ(read.status, 200) << read.body;
  EXPECT_EQ(read.body, "no b");
}

TEST(WriteFailure, AFailedClaimLeavesTheJobQueuedAndItsTokenUseless) {
  // Given a queued job
  EngineHarness h;
  ASSERT_EQ(run(h.engine(), enqueue_command("a", "k", "t-a")).status, 200);
  // When a claim is decided and folded, but its append fails
  h.faults().fail_next_appends(1);
  std::string lost = lease_token("lost");
  EXPECT_EQ(run(h.engine(), jobs::Claim{"w1", {}, 30, lost}).status, 503);
  // Then memory forgot the lease: the job is QUEUED, its target free
  EXPECT_EQ(job_state(h.engine(), "a"), "QUEUED");
  EXPECT_EQ(inspect(h.engine(), [](const State& s) { return s.jobs.holder.size(); }), 0u);
  // and the lost token opens nothing
  EXPECT_EQ(run(h.engine(), jobs::Start{"a", lost, ""}).status, 409);
  // and a new claim takes the job
  std::string token = lease_token("kept");
  Reply claimed = run(h.engine(), jobs::Claim{"w2", {}, 30, token});
  EXPECT_EQ(claimed_job(claimed), "a");
  EXPECT_EQ(run(h.engine(), jobs::Start{"a", token, ""}).status, 200);
  EXPECT_TRUE(same_state(loaded_digest(h.store(), false), engine_digest(h.engine())));
}

TEST(WriteFailure, AFailedMultiEventCommandIsUndoneWhole) {
  // Given a running job at its last step
  EngineHarness h;
  jobs::Enqueue enq = enqueue_command("a", "k", "t-a");
  enq.plan = {"ONLY"};
  enq.reuse_on_rerun = {};
  ASSERT_EQ(run(h.engine(), enq).status, 200);
  std::string token = lease_token("a");
  ASSERT_EQ(run(h.engine(), jobs::Claim{"w", {}, 30, token}).status, 200);
  ASSERT_EQ(run(h.engine(), jobs::Start{"a", token, ""}).status, 200);
  ASSERT_EQ(run(h.engine(), jobs::StepStart{"a", "ONLY", token}).status, 200);
  // When the step is done (StepSucceeded + AttemptSucceeded) and the append fails
  h.faults().fail_next_appends(1);
  EXPECT_EQ(run(h.engine(), jobs::StepDone{"a", "ONLY", token, ""}).status, 503);
  // Then neither event is in memory: the job runs its step, and no view was stored
  EXPECT_EQ(job_state(h.engine(), "a"), "RUNNING");
  std::string view;
  EXPECT_EQ(h.store().get_view(job_stream("a"), &view).code(), Status::Code::kNotFound);
  // and the retry finishes it
  Reply done = run(h.engine(), jobs::StepDone{"a", "ONLY", token, ""});
  EXPECT_EQ(done.status, 200);
  EXPECT_EQ(body_json(done)["events"],
            nlohmann::json::parse(R"(["StepSucceeded","AttemptSucceeded"])"));
  EXPECT_TRUE(same_state(loaded_digest(h.store(), false), engine_digest(h.engine())));
}

TEST(WriteFailure, EveryCommandOfTheFailedBatchGets503AndTheOthersAreWhole) {
  // Given an engine on a slow disk, so concurrent commands share batches
  EngineHarness h;
  h.store().set_append_delay(std::chrono::milliseconds(2));
  constexpr int kThreads = 12;
  std::vector<int> status(kThreads);
  // When twelve enqueues arrive together and one append fails
  h.faults().fail_next_appends(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string id = "job-" + std::to_string(t);
      status[t] = run(h.engine(), enqueue_command(id, "k", "t-" + id)).status;
    });
  }
  for (auto& t : threads) t.join();
  // Then a 503 means absent from the log and memory, a 200 means present in both
  int refused = 0;
  for (int t = 0; t < kThreads; ++t) {
    std::string id = "job-" + std::to_string(t);
    uint32_t version = 0;
    ASSERT_TRUE(h.store().stream_version(job_stream(id), &version).ok());
    ASSERT_TRUE(status[t] == 200 || status[t] == 503) << status[t];
    refused += status[t] == 503;
    EXPECT_EQ(version, status[t] == 200 ? 1u : 0u) << id;
    EXPECT_EQ(job_state(h.engine(), id), status[t] == 200 ? "QUEUED" : "absent") << id;
  }
  EXPECT_GE(refused, 1);
  EXPECT_EQ(h.faults().failed_appends(), 1);
  VerifyReport report;
  EXPECT_TRUE(verify_log(h.store(), &report).ok());
  EXPECT_TRUE(same_state(loaded_digest(h.store(), false), engine_digest(h.engine())));
}

TEST(WriteFailure, WhileTheDiskRefusesWritesReadsGoOnAndWritesResumeAfter) {
  // Given an engine with a job, on a disk that starts refusing every write
  EngineHarness h;
  ASSERT_EQ(run(h.engine(), enqueue_command("a", "k", "t-a")).status, 200);
  h.faults().fail_all_appends(true);
  // When commands keep coming
  for (int i = 0; i < 3; ++i) {
    // Then each gets 503 and reads still answer from the durable state
    EXPECT_EQ(run(h.engine(), jobs::Cancel{"a", "stop"}).status, 503);
    EXPECT_EQ(job_state(h.engine(), "a"), "QUEUED");
  }
  // When the disk recovers, the next command succeeds
  h.faults().fail_all_appends(false);
  EXPECT_EQ(run(h.engine(), jobs::Cancel{"a", "stop"}).status, 200);
  std::string view;
  ASSERT_TRUE(h.store().get_view(job_stream("a"), &view).ok());
  EXPECT_EQ(nlohmann::json::parse(view)["state"], "CANCELLED");
  EXPECT_TRUE(same_state(loaded_digest(h.store(), false), engine_digest(h.engine())));
}

TEST(RendererFailure, ACommandWhoseReplyCannotBeRenderedIsUndoneWhole) {
  // Given a queued job
  EngineHarness h;
  ASSERT_EQ(run(h.engine(), enqueue_command("a", "k", "t-a")).status, 200);
  uint64_t seq = h.store().last_seq();
  // When a claim is decided and folded but its reply cannot be rendered
  Request r = command_request(jobs::Claim{"w", {}, 30, lease_token("x")});
  r.render = [](const State&, const Decision*) -> Reply {
    throw std::runtime_error("renderer failed");
  };
  Reply reply = h.engine().execute(std::move(r));
  // Then it gets 503, nothing was written, and memory was rebuilt from the log
  EXPECT_EQ(reply.status, 503);
  EXPECT_EQ(h.store().last_seq(), seq);
  EXPECT_EQ(job_state(h.engine(), "a"), "QUEUED");
  EXPECT_TRUE(h.engine().writable());
  EXPECT_EQ(claimed_job(run(h.engine(), jobs::Claim{"w", {}, 30, lease_token("y")})), "a");
}

TEST(RendererFailureDeathTest, AReadWhoseRendererThrowsGetsAnErrorAndTheEngineGoesOn) {
  // Run in a child process: if the engine dies, only the child does.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        EngineHarness h;
        // Given an engine, when a read's renderer throws
        Reply r = h.engine().read([](const State&, const Decision*) -> Reply {
          throw std::runtime_error("renderer failed");
        });
        // Then the read gets a 5xx reply, and the engine still takes commands
        bool ok = r.status >= 500 && run(h.engine(), enqueue_command("a", "k", "t")).status == 200;
        std::fprintf(stderr, "read status %d\n", r.status);
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "read status 5");
}

TEST(WriteFailure, AFailedWriteWithASnapshotDueLeavesStateEqualToTheLog) {
  // Given an engine that writes a snapshot every few events, and a workload
  EngineOptions o = test_engine_options();
  o.snapshot_every_events = 3;
  EngineHarness h(o);
  for (int i = 0; i < 5; ++i) {
    std::string id = "job-" + std::to_string(i);
    ASSERT_EQ(run(h.engine(), enqueue_command(id, "k", "t-" + id)).status, 200);
  }
  // When the append that carries a snapshot fails
  h.faults().fail_next_appends(1);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(run(h.engine(), jobs::Cancel{"job-" + std::to_string(i), "x"}).status,
              i == 0 ? 503 : 200);
  }
  // Then the state is what the log says, folded from the snapshot or from scratch
  auto live = engine_digest(h.engine());
  EXPECT_TRUE(same_state(loaded_digest(h.store(), false), live));
  EXPECT_TRUE(same_state(loaded_digest(h.store(), true), live)) << "from the snapshot";
}

}  // namespace
}  // namespace runledger::testing
