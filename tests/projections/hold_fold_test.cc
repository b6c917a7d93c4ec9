// The hold fold and its forms: indexes stay equal to ones rebuilt from the
// holds themselves through any place/release sequence; folding the stored
// bytes from scratch gives the live state; the view has exactly the fields
// of docs/api.md; adopt/evict lose nothing.
#include <gtest/gtest.h>

#include "tests/projections/hold_testing.h"

namespace runledger::testing {
namespace {

using holds::kExecutionStateUnknown;
using holds::kResultUnknown;
using Json = nlohmann::json;

// 1'700'000'000'000 ms since the epoch, written out independently.
constexpr const char* kGivenNowRfc3339 = "2023-11-14T22:13:20.000Z";

// Given a mix of open and released holds of both kinds on two targets.
void given_mixed_holds(Given& g) {
  g.run(place_cmd("a", "orders", kExecutionStateUnknown));
  g.run(place_cmd("b", "orders", kResultUnknown));
  g.run(place_cmd("c", "payments", kExecutionStateUnknown));
  g.run(place_cmd("d", "orders", kExecutionStateUnknown));
  g.now_ms += 1500;
  g.run(release_cmd("a", "stopped", true));
  g.run(release_cmd("b", "rows verified"));
  g.run(place_cmd("e", "payments", kResultUnknown));
}

TEST(HoldFold, IndexesEqualARebuildAfterEveryStep) {
  Given g;
  struct Step {
    bool place;
    const char* id;
    const char* target;
    const char* kind;
  };
  const std::vector<Step> steps = {{true, "a", "orders", kExecutionStateUnknown},
                                   {true, "b", "orders", kResultUnknown},
                                   {true, "c", "payments", kExecutionStateUnknown},
                                   {false, "a", "", ""},
                                   {true, "d", "orders", kExecutionStateUnknown},
                                   {false, "c", "", ""},
                                   {false, "b", "", ""},
                                   {true, "e", "payments", kResultUnknown},
                                   {false, "d", "", ""},
                                   {false, "e", "", ""}};
  for (const Step& st : steps) {
    SCOPED_TRACE(std::string(st.place ? "place " : "release ") + st.id);
    Decision d = st.place ? g.run(place_cmd(st.id, st.target, st.kind))
                          : g.run(release_cmd(st.id, "checked", true));
    ASSERT_FALSE(d.rejection) << d.rejection->message;
    EXPECT_EQ(g.state.holds, rebuilt_indexes(g.state.holds));
  }
  // Then, with every hold released, no index keeps an entry.
  EXPECT_TRUE(g.state.holds.blocking_by_target.empty());
  EXPECT_TRUE(g.state.holds.recovery_by_target.empty());
  EXPECT_TRUE(g.state.holds.open_by_kind.empty());
}

TEST(HoldFold, OpenHoldsAreCountedPerKind) {
  Given g;
  given_mixed_holds(g);
  EXPECT_EQ(g.state.holds.open_by_kind,
            (std::map<std::string, size_t>{{kExecutionStateUnknown, 2}, {kResultUnknown, 1}}));
  EXPECT_EQ(g.state.holds.blocking_by_target.at("orders"), std::set<std::string>{"d"});
  EXPECT_EQ(g.state.holds.blocking_by_target.at("payments"), std::set<std::string>{"c"});
  EXPECT_EQ(g.state.holds.recovery_by_target.at("payments"), std::set<std::string>{"e"});
}

TEST(HoldFold, RefusedCommandsLeaveTheStateAsItWas) {
  Given g;
  given_mixed_holds(g);
  const holds::HoldsState before = g.state.holds;
  g.run(release_cmd("a", "again", true));
  g.run(release_cmd("d", "", true));
  g.run(release_cmd("c", "asked to stop", false));
  g.run(place_cmd("c", "orders", kResultUnknown));
  g.run(place_cmd("f", "orders", "BOGUS"));
  EXPECT_EQ(g.state.holds, before);
}

TEST(HoldFold, FoldFromStoredBytesEqualsLiveState) {
  Given g;
  given_mixed_holds(g);
  State replayed = replay(g.log());
  EXPECT_EQ(replayed.holds, g.state.holds);
  EXPECT_EQ(replayed.last_seq, g.state.last_seq);
  EXPECT_EQ(replayed.last_hash, g.state.last_hash);
}

TEST(HoldFold, FinishedOnlyOnceReleased) {
  Given g;
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown));
  EXPECT_FALSE(holds::finished(g.state.holds.by_id.at("h1")));
  g.run(release_cmd("h1", "stopped", true));
  EXPECT_TRUE(holds::finished(g.state.holds.by_id.at("h1")));
}

TEST(HoldFold, AdoptingEveryHoldRebuildsTheSameState) {
  Given g;
  given_mixed_holds(g);
  State fresh;
  for (const auto& [id, h] : g.state.holds.by_id) holds::adopt(fresh, h);
  EXPECT_EQ(fresh.holds, g.state.holds);
}

TEST(HoldFold, AdoptingAHoldAgainReplacesItWithoutCountingItTwice) {
  Given g;
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown));
  holds::Hold released = g.state.holds.by_id.at("h1");
  holds::adopt(g.state, g.state.holds.by_id.at("h1"));
  EXPECT_EQ(g.state.holds.open_by_kind.at(kExecutionStateUnknown), 1u);

  released.released = true;
  holds::adopt(g.state, released);
  EXPECT_EQ(g.state.holds, rebuilt_indexes(g.state.holds));
  EXPECT_EQ(holds::blocking_hold(g.state, "orders"), nullptr);
}

TEST(HoldFold, EvictRemovesTheHoldAndItsIndexEntries) {
  Given g;
  given_mixed_holds(g);
  holds::evict(g.state, "a");  // released
  holds::evict(g.state, "d");  // open: its index entries must go with it
  holds::evict(g.state, "never-there");
  EXPECT_EQ(g.state.holds.by_id.count("a"), 0u);
  EXPECT_EQ(g.state.holds.by_id.count("d"), 0u);
  EXPECT_EQ(g.state.holds, rebuilt_indexes(g.state.holds));
  EXPECT_EQ(g.state.holds.blocking_by_target.count("orders"), 0u);
}

TEST(HoldView, OpenHoldHasExactlyTheContractFields) {
  Given g;
  g.actor = "ops-alice";
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown, "reply lost"));
  Json v = holds::view(g.state.holds.by_id.at("h1"));
  EXPECT_EQ(v, (Json{{"id", "h1"},
                     {"target", "orders"},
                     {"kind", kExecutionStateUnknown},
                     {"job", nullptr},
                     {"attempt", nullptr},
                     {"reason", "reply lost"},
                     {"placed_by", "ops-alice"},
                     {"placed_at", kGivenNowRfc3339},
                     {"released", false},
                     {"released_by", nullptr},
                     {"released_at", nullptr},
                     {"release_note", nullptr},
                     {"execution_stopped", false},
                     {"outcome", nullptr}}));
}

TEST(HoldView, ReleasedHoldShowsWhoWhenAndTheEvidence) {
  Given g;
  given_job(g, "j1", "orders", 1);
  g.run(place_cmd("h1", "orders", kExecutionStateUnknown, "reply lost", "j1"));
  g.actor = "ops-bob";
  g.now_ms += 2'345;
  g.run(release_cmd("h1", "task STOPPED", true));
  Json v = holds::view(g.state.holds.by_id.at("h1"));

  EXPECT_EQ(v["job"], "j1");
  EXPECT_EQ(v["attempt"], 1);
  EXPECT_EQ(v["placed_at"], kGivenNowRfc3339);
  EXPECT_EQ(v["released"], true);
  EXPECT_EQ(v["released_by"], "ops-bob");
  EXPECT_EQ(v["released_at"], "2023-11-14T22:13:22.345Z");
  EXPECT_EQ(v["release_note"], "task STOPPED");
  EXPECT_EQ(v["execution_stopped"], true);
  EXPECT_EQ(v["outcome"], nullptr);
  EXPECT_EQ(v.size(), 14u);
}

}  // namespace
}  // namespace runledger::testing
