// A projection snapshot is a cache of the log. runledgerd on a folder whose
// snapshot is damaged sets it aside, says so, folds the whole log and serves
// the same state; a damaged log under a damaged snapshot still stops the
// start, naming the first bad seq.
#include <httplib.h>

#include <regex>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "events/keys.h"
#include "tests/tools/tools_test_support.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

std::string http_path(const std::string& stream) {
  const auto slash = stream.find('/');
  return "/v1/" + stream.substr(0, slash) + "s/" + stream.substr(slash + 1);
}

// Closes the rig's engine (its shutdown stores a snapshot of the end of the
// log) and checks that the folder holds that snapshot.
void close_with_snapshot(EngineRig& rig) {
  rig.close();
  ASSERT_FALSE(RawDb(rig.data()).get(keys::kSnapshotFamily, keys::kSnapshotKey).empty());
}

TEST(SnapshotFallback, ADamagedSnapshotIsSetAsideAndTheServerServesTheLogsState) {
  // Given queued jobs and a cancelled one: a state the server's clock leaves
  // as it is (a lease or a schedule would move on in real time)
  EngineRig rig;
  for (const char* id : {"q1", "q2", "q3", "gone"}) {
    ASSERT_EQ(rig.run(enqueue(id, std::string("t-") + id)).status, 200) << id;
  }
  ASSERT_EQ(rig.run(jobs::Cancel{"gone", "not needed"}).status, 200);
  const std::map<std::string, json> views = rig.live_views();
  ASSERT_EQ(views.size(), 4u);  // q1, q2, q3 and "seq"
  const uint64_t events = rig.last_seq();
  ASSERT_NO_FATAL_FAILURE(close_with_snapshot(rig));
  // and a bit flipped in its snapshot
  {
    RawDb db(rig.data());
    std::string snapshot = db.get(keys::kSnapshotFamily, keys::kSnapshotKey);
    snapshot[snapshot.size() / 2] ^= 0x01;
    db.put(keys::kSnapshotFamily, keys::kSnapshotKey, snapshot);
  }

  // When runledgerd starts on the folder
  ServerProcess server(rig.data());
  ASSERT_TRUE(server.wait_ready()) << server.log();
  // Then it says it set the snapshot aside
  EXPECT_NE(server.log().find("set the snapshot aside and folded the whole log"), std::string::npos)
      << server.log();
  // and, as every start does (docs/cli.md), how many events it folded and how long it took
  const std::regex replayed("replayed " + std::to_string(events) +
                            R"( events in [0-9.]+ s \(snapshot at seq 0\))");
  EXPECT_TRUE(std::regex_search(server.log(), replayed)) << server.log();
  // and serves every entity as the engine did
  httplib::Client client("127.0.0.1", server.port());
  for (const auto& [stream, view] : views) {
    if (stream == "seq") continue;
    auto res = client.Get(http_path(stream));
    ASSERT_TRUE(res) << stream;
    ASSERT_EQ(res->status, 200) << stream << ": " << res->body;
    EXPECT_EQ(json::parse(res->body), view) << stream;
  }
  auto gone = client.Get("/v1/jobs/gone");
  ASSERT_TRUE(gone);
  ASSERT_EQ(gone->status, 200) << gone->body;
  EXPECT_EQ(json::parse(gone->body).at("state"), "CANCELLED");
  // and a replay of the log equals what it serves
  CliResult compare = run_cli({"replay", "--data", rig.data(), "--compare"});
  EXPECT_EQ(compare.code, 0) << compare.out << compare.err;
}

TEST(SnapshotFallback, ADamagedLogUnderADamagedSnapshotStillStopsTheStart) {
  // Given a folder after the mixed workload, with a snapshot that is not one
  // and an event in the middle of the log taken out of the hash chain
  EngineRig rig;
  run_mixed_workload(rig);
  const uint64_t bad_seq = rig.last_seq() / 2;
  ASSERT_GT(bad_seq, 1u);
  ASSERT_NO_FATAL_FAILURE(close_with_snapshot(rig));
  {
    RawDb db(rig.data());
    db.put(keys::kSnapshotFamily, keys::kSnapshotKey, "not a snapshot");
    db.put_event(bad_seq, with_prev_hash(db.event(bad_seq), sha256("another log")));
  }

  // When runledgerd starts on it, then it refuses, naming the damaged event
  ServerProcess server(rig.data());
  EXPECT_FALSE(server.wait_ready()) << "it served a damaged log";
  EXPECT_NE(server.log().find("corruption at seq " + std::to_string(bad_seq)), std::string::npos)
      << server.log();
}

}  // namespace
}  // namespace runledger::testing
