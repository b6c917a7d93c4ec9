// runledger replay: the state rebuilt from the log alone equals the state the
// engine had (at the end and at earlier points), and --compare finds no
// difference from what the server serves, or lists the ones there are.
#include <gtest/gtest.h>

#include "base/time_text.h"
#include "events/event_codec.h"
#include "events/keys.h"
#include "tests/tools/tools_test_support.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

json parse(const CliResult& r) {
  json j = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << "not JSON: " << r.out << r.err;
  return j;
}

// Stream -> view of a replay's output.
std::map<std::string, json> by_stream(const json& state) {
  std::map<std::string, json> out;
  for (const char* kind : {"jobs", "connectors", "holds"}) {
    std::string prefix = std::string(kind).substr(0, std::string(kind).size() - 1) + "/";
    for (const auto& v : state.at(kind)) out[prefix + v.at("id").get<std::string>()] = v;
  }
  return out;
}

// Every entity the engine holds in memory at that point, compared with the
// replay's view of it; and nothing else in the replay (the points are
// chosen before anything finishes).
void expect_replay_equals(const std::string& data, const std::map<std::string, json>& engine) {
  const uint64_t seq = engine.at("seq").get<uint64_t>();
  CliResult r = run_cli({"replay", "--data", data, "--until-seq", std::to_string(seq)});
  ASSERT_EQ(r.code, 0) << r.err;
  json state = parse(r);
  EXPECT_EQ(state.at("seq"), seq);
  auto replayed = by_stream(state);
  for (const auto& [stream, view] : engine) {
    if (stream == "seq") continue;
    ASSERT_TRUE(replayed.count(stream)) << stream << " missing from the replay at seq " << seq;
    EXPECT_EQ(replayed[stream], view) << stream << " at seq " << seq;
  }
  EXPECT_EQ(replayed.size() + 1, engine.size()) << "the replay at seq " << seq << " holds more";
}

TEST(Replay, UntilSeqEqualsTheEngineStateAtThatPoint) {
  EngineRig rig;
  std::vector<std::map<std::string, json>> points;
  rig.run(enqueue("j1", "t1"));
  points.push_back(rig.live_views());
  rig.run(claim("j1", "w1", "token-1"));
  rig.run(enqueue("j2", "t1"));  // blocked by j1
  points.push_back(rig.live_views());
  rig.run(jobs::Start{"j1", "token-1", "exec-1"});
  rig.run(jobs::StepStart{"j1", "A", "token-1"});
  rig.run(connectors::Create{"c1", "alpha", 0});
  rig.run(connectors::StartSync{"c1", "s1"});
  points.push_back(rig.live_views());
  rig.run(holds::Place{"h1", "t9", holds::kExecutionStateUnknown, "manual run", ""});
  rig.run(jobs::StepDone{"j1", "A", "token-1", R"({"rows":1})"});
  points.push_back(rig.live_views());
  for (const auto& p : points) expect_replay_equals(rig.data(), p);
}

TEST(Replay, UntilTimeStopsBeforeTheFirstEventRecordedAfterIt) {
  EngineRig rig;
  rig.run(enqueue("j1", "t1"));
  rig.run(claim("j1", "w1", "token-1"));
  const uint64_t seq_then = rig.last_seq();
  const int64_t then_ms = rig.clock().now_ms();
  rig.run(jobs::Start{"j1", "token-1", "exec-1"});
  rig.run(enqueue("j2", "t2"));
  CliResult r = run_cli({"replay", "--data", rig.data(), "--until-time", format_time_ms(then_ms)});
  ASSERT_EQ(r.code, 0) << r.err;
  json state = parse(r);
  EXPECT_EQ(state.at("seq"), seq_then);
  ASSERT_EQ(state.at("jobs").size(), 1u);
  EXPECT_EQ(state.at("jobs")[0].at("state"), "LEASED");
}

TEST(Replay, EntityPrintsItsHttpView) {
  EngineRig rig;
  rig.run(enqueue("j1", "t1"));
  rig.run(claim("j1", "w1", "token-1"));
  json expected = rig.live_views().at("job/j1");
  CliResult r = run_cli({"replay", "--data", rig.data(), "--entity", "job/j1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(parse(r), expected);
}

TEST(Replay, EntityThatNeverExistedExitsOne) {
  EngineRig rig;
  rig.run(enqueue("j1", "t1"));
  CliResult r = run_cli({"replay", "--data", rig.data(), "--entity", "hold/nope"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("hold/nope did not exist at seq 1"), std::string::npos) << r.err;
}

TEST(Replay, KeepsFinishedEntitiesOfTheWholeHistory) {
  EngineRig rig;
  run_mixed_workload(rig);
  rig.close();
  CliResult r = run_cli({"replay", "--data", rig.data()});
  ASSERT_EQ(r.code, 0) << r.err;
  auto replayed = by_stream(parse(r));
  EXPECT_EQ(replayed.at("job/j3").at("state"), "CANCELLED");
  EXPECT_EQ(replayed.at("job/j4").at("state"), "FAILED");
  EXPECT_EQ(replayed.at("job/j1").at("attempt"), 2);  // rerun
  EXPECT_EQ(replayed.at("job/j6").at("blocked_by"), json({{"job", "j5"}}));
  EXPECT_EQ(replayed.at("job/j7").at("blocked_by"), json({{"hold", "h-op2"}}));
  EXPECT_EQ(replayed.at("hold/h-op1").at("released"), true);
  EXPECT_EQ(replayed.count("connector/c3"), 0u) << "a deleted connector is gone";
  EXPECT_EQ(replayed.at("connector/c2").at("status"), "paused");
}

TEST(Replay, PrintsTheStateAsAJsonWriterWouldLayItOut) {
  // The state is written one entity at a time, not dumped from one tree: the
  // text must still be exactly what a JSON dump of the same content gives,
  // keys in the contract's order, compact and with --pretty.
  EngineRig rig;
  run_mixed_workload(rig);
  rig.close();
  for (bool pretty : {false, true}) {
    std::vector<std::string> args = {"replay", "--data", rig.data()};
    if (pretty) args.push_back("--pretty");
    CliResult r = run_cli(args);
    ASSERT_EQ(r.code, 0) << r.err;
    nlohmann::ordered_json state = nlohmann::ordered_json::parse(r.out, nullptr, false);
    ASSERT_FALSE(state.is_discarded()) << r.out;
    std::vector<std::string> keys;
    for (const auto& [key, value] : state.items()) keys.push_back(key);
    EXPECT_EQ(keys, (std::vector<std::string>{"seq", "jobs", "connectors", "holds"}));
    EXPECT_FALSE(state.at("jobs").empty());
    EXPECT_FALSE(state.at("connectors").empty());
    EXPECT_FALSE(state.at("holds").empty());
    EXPECT_EQ(r.out, (pretty ? state.dump(2) : state.dump()) + "\n") << "pretty: " << pretty;
  }
}

TEST(ReplayCompare, CleanAfterAMixedWorkloadWhileTheEngineRuns) {
  // Snapshots every 10 events: the server's side is a snapshot plus a tail.
  EngineRig rig(/*snapshot_every_events=*/10);
  run_mixed_workload(rig);
  CliResult r = run_cli({"replay", "--data", rig.data(), "--compare"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("no difference at seq " + std::to_string(rig.last_seq())), std::string::npos)
      << r.err;
  // and stdout holds the replayed state, as without --compare (docs/cli.md:
  // "prints the state as JSON ... --compare also checks it")
  json state = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(state.is_object()) << r.out;
  EXPECT_EQ(state.value("seq", uint64_t{0}), rig.last_seq());
  EXPECT_FALSE(state.at("jobs").empty());
}

TEST(ReplayCompare, CleanAfterTheEngineShutDown) {
  EngineRig rig;
  run_mixed_workload(rig);
  rig.close();  // the final snapshot covers the whole log: no tail
  CliResult r = run_cli({"replay", "--data", rig.data(), "--compare"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST(ReplayCompare, ListsEveryDifferenceOfAnAlteredStoredView) {
  EngineRig rig;
  run_mixed_workload(rig);
  rig.close();
  {
    RawDb db(rig.data());
    json view = json::parse(db.get(keys::kViewsFamily, "job/j3"));
    ASSERT_EQ(view.at("state"), "CANCELLED");
    view["state"] = "SUCCEEDED";
    view["priority"] = 7;
    db.put(keys::kViewsFamily, "job/j3", view.dump());
  }
  CliResult r = run_cli({"replay", "--data", rig.data(), "--compare"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(R"(job/j3 state: replay "CANCELLED", server "SUCCEEDED")"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("job/j3 priority: replay 0, server 7"), std::string::npos) << r.err;
  // and the index of stored views, which still files j3 under CANCELLED
  EXPECT_NE(r.err.find("job/j3: the index of stored views lacks an entry"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("job/j3: an entry of the index of stored views disagrees with its view"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("4 differences"), std::string::npos) << r.err;
}

TEST(ReplayCompare, AStoredViewOfAnEntityTheLogNeverHadIsReported) {
  EngineRig rig;
  run_mixed_workload(rig);
  rig.close();
  RawDb(rig.data()).put(keys::kViewsFamily, "hold/ghost", R"({"id":"ghost"})");
  CliResult r = run_cli({"replay", "--data", rig.data(), "--compare"});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("hold/ghost: only in the server's state"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace runledger::testing
