// Finished entities leave memory (DESIGN "Projections"): a finished job or a
// released hold is dropped from the State, its view is kept in the store's
// `views` column family for reads, and a later command that names it loads
// it back from its stream (hydration), e.g. a rerun.
#include <string>

#include <gtest/gtest.h>

#include "engine/state_loader.h"
#include "tests/engine/engine_harness.h"
#include "tests/engine/state_digest.h"

namespace runledger::testing {
namespace {

bool job_in_memory(Engine& e, const std::string& id) {
  return inspect(e, [&](const State& s) { return s.jobs.by_id.count(id) == 1; });
}

bool hold_in_memory(Engine& e, const std::string& id) {
  return inspect(e, [&](const State& s) { return s.holds.by_id.count(id) == 1; });
}

nlohmann::json stored_view(EventStore& store, const std::string& stream) {
  std::string v;
  Status st = store.get_view(stream, &v);
  return st.ok() ? nlohmann::json::parse(v) : nlohmann::json();
}

class Hydration : public ::testing::Test {
 protected:
  // Runs job `id` to SUCCEEDED.
  void finish(const std::string& id) {
    ASSERT_EQ(run_w1_job(h.engine(), id, "kind-" + id, "t-" + id, {}), "");
  }
  EngineHarness h;
};

TEST_F(Hydration, AFinishedJobLeavesMemoryAndIsReadFromTheViewsFamily) {
  // Given a job run to success
  finish("j");
  // Then it is no longer in memory
  EXPECT_FALSE(job_in_memory(h.engine(), "j"));
  // and the store keeps its view, as of its last event
  auto view = stored_view(h.store(), "job/j");
  ASSERT_FALSE(view.is_null());
  EXPECT_EQ(view["state"], "SUCCEEDED");
  EXPECT_EQ(view["attempt"], 1);
  uint32_t version = 0;
  ASSERT_TRUE(h.store().stream_version("job/j", &version).ok());
  EXPECT_EQ(view["version"], version);
  EXPECT_EQ(view["steps"].size(), 4u);
}

TEST_F(Hydration, ARerunOfAFinishedJobLoadsItFromItsStreamAndRunsIt) {
  // Given a finished job that left memory
  finish("j");
  ASSERT_FALSE(job_in_memory(h.engine(), "j"));
  // When an operator reruns it
  Reply r = run(h.engine(), jobs::Rerun{"j", "late data"});
  // Then the rerun is accepted: attempt 2 is queued, reusing FETCH
  ASSERT_EQ(r.status, 200) << r.body;
  auto live = inspect(h.engine(), [](const State& s) {
    auto it = s.jobs.by_id.find("j");
    return it == s.jobs.by_id.end() ? nlohmann::json() : jobs::view(s, it->second);
  });
  ASSERT_FALSE(live.is_null());
  EXPECT_EQ(live["state"], "QUEUED");
  EXPECT_EQ(live["attempt"], 2);
  EXPECT_EQ(live["steps"][0]["state"], "REUSED");
  // and the stored view is gone: memory answers for a live job
  EXPECT_TRUE(stored_view(h.store(), "job/j").is_null());
  // and attempt 2 runs to success and is stored again
  std::string token = lease_token("rerun");
  ASSERT_EQ(run(h.engine(), jobs::Claim{"w", {}, 60, token}).status, 200);
  ASSERT_EQ(run(h.engine(), jobs::Start{"j", token, ""}).status, 200);
  for (const char* step : {"VALIDATE", "LOAD", "AGGREGATE"}) {
    ASSERT_EQ(run(h.engine(), jobs::StepStart{"j", step, token}).status, 200) << step;
    ASSERT_EQ(run(h.engine(), jobs::StepDone{"j", step, token, ""}).status, 200) << step;
  }
  auto view = stored_view(h.store(), "job/j");
  EXPECT_EQ(view["state"], "SUCCEEDED");
  EXPECT_EQ(view["attempt"], 2);
  EXPECT_FALSE(job_in_memory(h.engine(), "j"));
  EXPECT_TRUE(same_state(loaded_digest(h.store(), false), engine_digest(h.engine())));
}

TEST_F(Hydration, ARefusedCommandOnAFinishedJobLeavesItOutOfMemory) {
  // Given a finished job that left memory
  finish("j");
  // When a command names it and is refused (a finished job cannot be cancelled)
  Reply r = run(h.engine(), jobs::Cancel{"j", "too late"});
  EXPECT_EQ(r.status, 409);
  // Then memory still holds only live work, as a replay of the log would
  EXPECT_FALSE(job_in_memory(h.engine(), "j"));
  auto live = engine_digest(h.engine());
  auto replayed = loaded_digest(h.store(), false);
  EXPECT_TRUE(same_state(replayed, live));
}

TEST_F(Hydration, ARerunAfterARefusedCommandStillDropsTheStoredView) {
  // Given a finished job, and a refused command that named it
  finish("j");
  ASSERT_EQ(run(h.engine(), jobs::Cancel{"j", "too late"}).status, 409);
  // When the job is rerun
  ASSERT_EQ(run(h.engine(), jobs::Rerun{"j", "late data"}).status, 200);
  // Then the stored view of the finished job is gone (a listing that merges
  // stored views would otherwise show it SUCCEEDED while it is QUEUED)
  auto stale = stored_view(h.store(), "job/j");
  EXPECT_TRUE(stale.is_null()) << "stored view still says " << stale.value("state", "?");
}

TEST_F(Hydration, AReleasedHoldLeavesMemoryAndIsReadFromTheViewsFamily) {
  // Given an operator's hold, released with evidence
  ASSERT_EQ(run(h.engine(), holds::Place{"h1", "t", holds::kExecutionStateUnknown,
                                         "a script may still write", ""})
                .status,
            200);
  ASSERT_TRUE(hold_in_memory(h.engine(), "h1"));
  ASSERT_EQ(
      run(h.engine(), holds::ReleaseHold{"h1", "the script exited", true, std::nullopt}).status,
      200);
  // Then it left memory and its view is stored, released
  EXPECT_FALSE(hold_in_memory(h.engine(), "h1"));
  auto view = stored_view(h.store(), "hold/h1");
  ASSERT_FALSE(view.is_null());
  EXPECT_EQ(view["id"], "h1");
  EXPECT_EQ(view.value("released", false), true) << view.dump();
  // and a second release of it is refused as already released, not unknown
  Reply again = run(h.engine(), holds::ReleaseHold{"h1", "again", true, std::nullopt});
  EXPECT_EQ(again.status, 409) << again.body;
  // and placing a hold with its id is a duplicate
  Reply dup =
      run(h.engine(), holds::Place{"h1", "t", holds::kResultUnknown, "reuse of the id", ""});
  EXPECT_EQ(dup.status, 409) << dup.body;
  EXPECT_EQ(body_json(dup).value("code", ""), "duplicate_id");
}

TEST_F(Hydration, AHoldOnAFinishedJobIsPlacedAgainstItsLatestAttempt) {
  // Given a finished job that left memory
  finish("j");
  // When an operator places a RESULT_UNKNOWN hold naming it
  Reply r =
      run(h.engine(), holds::Place{"h-j", "t-j", holds::kResultUnknown, "output looks short", "j"});
  // Then the job was loaded to check it, and the hold records attempt 1
  ASSERT_EQ(r.status, 200) << r.body;
  auto hold = inspect(h.engine(), [](const State& s) {
    auto it = s.holds.by_id.find("h-j");
    return it == s.holds.by_id.end() ? nlohmann::json() : holds::view(it->second);
  });
  EXPECT_EQ(hold["attempt"], 1) << hold.dump();
  // and memory still equals a replay of the log
  auto live = engine_digest(h.engine());
  auto replayed = loaded_digest(h.store(), false);
  EXPECT_TRUE(same_state(replayed, live));
}

TEST_F(Hydration, AFoldThatDropsFinishedJobsAsItGoesLoadsThemBackForALaterEvent) {
  // Given a job that finished and was then rerun (attempt 2 queued, reusing
  // FETCH from attempt 1), and another job that finished
  finish("j");
  ASSERT_EQ(run(h.engine(), jobs::Rerun{"j", "late data"}).status, 200);
  finish("k");
  // When the log is folded from its first event, dropping finished entities
  // after every event
  LoadOptions lo;
  lo.use_snapshot = false;
  lo.evict_every_events = 1;
  size_t evictions = 0;
  size_t finished_seen = 0;
  lo.before_eviction = [&](const State& s) {
    ++evictions;
    finished_seen += s.jobs.count_by_state.at("SUCCEEDED");
  };
  State s;
  LoadReport report;
  ASSERT_TRUE(load_state(h.store(), lo, &s, &report).ok());
  // Then the rerun found attempt 1 again: the state is the engine's, and the
  // same as a fold that drops finished jobs only at the end
  auto dropped_as_it_goes = state_digest(s);
  EXPECT_TRUE(same_state(dropped_as_it_goes, engine_digest(h.engine())));
  EXPECT_TRUE(same_state(dropped_as_it_goes, loaded_digest(h.store(), false)));
  auto it = s.jobs.by_id.find("j");
  ASSERT_NE(it, s.jobs.by_id.end());
  EXPECT_EQ(jobs::view(s, it->second)["steps"][0]["state"], "REUSED");
  EXPECT_EQ(s.jobs.by_id.count("k"), 0u);
  // and each eviction was announced first (once per event, and at the end),
  // while j's first attempt and k were still counted
  EXPECT_EQ(evictions, report.replayed + 1);
  EXPECT_EQ(finished_seen, 2u);
}

}  // namespace
}  // namespace runledger::testing
