// The index of stored views (engine/view_index.h): written with the views of
// finished entities, taken away when a rerun brings a job back, built once
// for a store written before it existed, and checked by replay --compare.
#include "engine/view_index.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "projections/job.h"
#include "tests/engine/engine_harness.h"

namespace runledger::testing {
namespace {

using view_index::Field;

// Every index entry in the store (not the ready mark, not the counts), in
// key order.
std::vector<std::string> index_keys(const EventStore& store) {
  std::vector<std::string> keys;
  Status s =
      store.scan_views(view_index::kKeyPrefix, "", [&](std::string_view k, std::string_view) {
        if (k != view_index::kReadyKey && !k.starts_with("index/count/")) keys.emplace_back(k);
        return true;
      });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return keys;
}

// The stored finished jobs by state: SUCCEEDED, FAILED, CANCELLED.
view_index::FinishedCounts counts(const EventStore& store) {
  view_index::FinishedCounts c{};
  Status s = view_index::read_counts(store, &c);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return c;
}

std::string entry(Field f, std::string_view value, std::string_view id) {
  return view_index::prefix(f, value) + std::string(id);
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Deletes every index key and the ready mark: the store as it was before
// the index existed.
void drop_index(EventStore& store) {
  AppendBatch batch;
  for (auto& k : index_keys(store)) batch.views.emplace_back(std::move(k), std::nullopt);
  batch.views.emplace_back(std::string(view_index::kReadyKey), std::nullopt);
  ASSERT_TRUE(store.append(batch).ok());
}

class ViewIndex : public ::testing::Test {
 protected:
  void finish(const std::string& id, const std::string& kind, const std::string& target) {
    ASSERT_EQ(run_w1_job(h.engine(), id, kind, target, {}), "");
  }
  void place_and_release_hold(const std::string& id, const std::string& target) {
    ASSERT_EQ(run(h.engine(), holds::Place{id, target, holds::kExecutionStateUnknown,
                                           "a script may still write", ""})
                  .status,
              200);
    ASSERT_EQ(
        run(h.engine(), holds::ReleaseHold{id, "the script exited", true, std::nullopt}).status,
        200);
  }
  EngineHarness h;
};

TEST_F(ViewIndex, AFreshStoreIsReadyAndAFinishedJobIsIndexedUnderItsStateTargetAndKind) {
  EXPECT_TRUE(view_index::ready(h.store()));
  // Given a job that runs to success, and one still queued
  finish("j1", "etl", "orders");
  ASSERT_EQ(run(h.engine(), enqueue_command("j2", "etl", "orders")).status, 200);
  // Then only the finished one is indexed: under SUCCEEDED, its target and its kind
  EXPECT_EQ(index_keys(h.store()), sorted({entry(Field::kJobState, "SUCCEEDED", "j1"),
                                           entry(Field::kJobTarget, "orders", "j1"),
                                           entry(Field::kJobKind, "etl", "j1")}));
}

TEST_F(ViewIndex, ARerunTakesTheEntriesAwayAndTheNextEndIndexesItsNewState) {
  // Given a finished job
  finish("j", "etl", "orders");
  // When it is rerun: memory answers for it, so neither view nor entries stay
  EXPECT_EQ(counts(h.store()), (view_index::FinishedCounts{1, 0, 0}));
  ASSERT_EQ(run(h.engine(), jobs::Rerun{"j", "late data"}).status, 200);
  EXPECT_EQ(index_keys(h.store()), std::vector<std::string>{});
  EXPECT_EQ(counts(h.store()), (view_index::FinishedCounts{0, 0, 0}));
  // When the new attempt is cancelled while queued
  ASSERT_EQ(run(h.engine(), jobs::Cancel{"j", "not needed"}).status, 200);
  // Then it is indexed as CANCELLED, and nowhere as SUCCEEDED
  EXPECT_EQ(index_keys(h.store()),
            sorted({entry(Field::kJobState, "CANCELLED", "j"),
                    entry(Field::kJobTarget, "orders", "j"), entry(Field::kJobKind, "etl", "j")}));
  EXPECT_EQ(counts(h.store()), (view_index::FinishedCounts{0, 0, 1}));
  EXPECT_EQ(inspect(h.engine(), [&](const State&) { return h.engine().stored_finished_jobs(); }),
            (view_index::FinishedCounts{0, 0, 1}));
  std::vector<std::string> problems;
  ASSERT_TRUE(view_index::check(h.store(), &problems).ok());
  EXPECT_EQ(problems, std::vector<std::string>{});
}

TEST_F(ViewIndex, AJobFinishedAgainWithinOneBatchLosesTheEntryOfItsOldState) {
  // Given a job stored as FAILED...
  State s;
  jobs::Job j;
  j.id = "j";
  j.kind = "etl";
  j.target = "orders";
  j.version = 3;
  jobs::Attempt first;
  first.number = 1;
  first.state = jobs::AttemptState::kFailed;
  j.attempts.push_back(first);
  jobs::adopt(s, j);
  const std::vector<std::string> stored = view_index::entries_of(s, "job/j");
  ASSERT_EQ(stored.size(), 3u);
  // ...that one batch reran and cancelled (attempt 2, CANCELLED)
  jobs::Attempt second;
  second.number = 2;
  second.state = jobs::AttemptState::kCancelled;
  j.attempts.push_back(second);
  j.version = 5;
  jobs::adopt(s, j);
  view_index::ViewWrites out;
  view_index::FinishedCounts c{0, 1, 0};
  view_index::add_view_writes(s, "job/j", &stored, &out, &c);
  EXPECT_EQ(c, (view_index::FinishedCounts{0, 0, 1}));
  // Then the FAILED entry is deleted, the view and the CANCELLED entry written
  auto written = [&](const std::string& key) {
    return std::any_of(out.begin(), out.end(),
                       [&](const auto& w) { return w.first == key && w.second.has_value(); });
  };
  auto deleted = [&](const std::string& key) {
    return std::any_of(out.begin(), out.end(),
                       [&](const auto& w) { return w.first == key && !w.second.has_value(); });
  };
  EXPECT_TRUE(deleted(entry(Field::kJobState, "FAILED", "j")));
  EXPECT_TRUE(written("job/j"));
  EXPECT_TRUE(written(entry(Field::kJobState, "CANCELLED", "j")));
  EXPECT_TRUE(written(entry(Field::kJobTarget, "orders", "j")));
  EXPECT_FALSE(deleted(entry(Field::kJobTarget, "orders", "j")));
}

TEST_F(ViewIndex, AStoreWrittenBeforeTheIndexIsIndexedOnceByBuild) {
  // Given finished jobs and a released hold in a store without the index
  finish("a", "etl", "orders");
  finish("b", "backfill", "users");
  place_and_release_hold("h", "orders");
  const std::vector<std::string> expected = index_keys(h.store());
  ASSERT_EQ(expected.size(), 7u);
  drop_index(h.store());
  ASSERT_FALSE(view_index::ready(h.store()));
  ASSERT_EQ(index_keys(h.store()), std::vector<std::string>{});
  // When the index is built
  size_t indexed = 0;
  ASSERT_TRUE(view_index::build(h.store(), &indexed).ok());
  // Then it holds what the engine would have written, and is marked ready
  EXPECT_EQ(indexed, 3u);
  EXPECT_EQ(index_keys(h.store()), expected);
  EXPECT_EQ(counts(h.store()), (view_index::FinishedCounts{2, 0, 0}));
  EXPECT_TRUE(view_index::ready(h.store()));
  std::vector<std::string> problems;
  ASSERT_TRUE(view_index::check(h.store(), &problems).ok());
  EXPECT_EQ(problems, std::vector<std::string>{});
  // and building again finds nothing to do
  ASSERT_TRUE(view_index::build(h.store(), &indexed).ok());
  EXPECT_EQ(indexed, 0u);
}

TEST_F(ViewIndex, AStartOnAStoreWithoutTheIndexBuildsIt) {
  finish("a", "etl", "orders");
  const std::vector<std::string> expected = index_keys(h.store());
  drop_index(h.store());
  // When the engine starts again on that store
  h.reopen();
  // Then the index is back
  EXPECT_TRUE(view_index::ready(h.store()));
  EXPECT_EQ(index_keys(h.store()), expected);
}

TEST_F(ViewIndex, CheckNamesAMissingEntryAndOneOfNoStoredView) {
  finish("a", "etl", "orders");
  // Given one entry gone and one that names a job with no stored view
  AppendBatch damage;
  damage.views.emplace_back(entry(Field::kJobKind, "etl", "a"), std::nullopt);
  damage.views.emplace_back(entry(Field::kJobTarget, "orders", "ghost"), std::string());
  damage.views.emplace_back(entry(Field::kJobTarget, "elsewhere", "a"), std::string());
  damage.views.emplace_back("index/count/job/FAILED", "2");
  ASSERT_TRUE(h.store().append(damage).ok());
  std::vector<std::string> problems;
  ASSERT_TRUE(view_index::check(h.store(), &problems).ok());
  EXPECT_EQ(sorted(problems),
            sorted({"job/a: the index of stored views lacks an entry",
                    "job/ghost: indexed, but no view of it is stored",
                    "job/a: an entry of the index of stored views disagrees with its view",
                    "the index of stored views counts 2 FAILED jobs, and holds 0"}));
}

}  // namespace
}  // namespace runledger::testing
