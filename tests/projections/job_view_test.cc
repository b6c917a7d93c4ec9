// The job as the API shows it, its lossless snapshot form, and the
// guarantee that a replay of the stored bytes rebuilds exactly the live
// state (jobs and every index), also through snapshot and eviction.
#include "base/time_text.h"
#include "tests/projections/job_testing.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "base/sha256.h"
#include "projections/snapshot.h"
#include "projections/snapshot_generated.h"

namespace runledger::job_tests {
namespace {

using JobView = JobTest;
using JobSnapshot = JobTest;
using nlohmann::json;

TEST_F(JobView, ANewJobShowsEveryFieldOfTheContract) {
  jobs::Enqueue c = job("j1", "dataset/orders");
  c.priority = 4;
  enqueue(c);
  json v = view_of("j1");
  std::vector<std::string> keys;
  for (const auto& [k, _] : v.items()) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  std::vector<std::string> expected = {"id",
                                       "kind",
                                       "target",
                                       "input",
                                       "plan",
                                       "reuse_on_rerun",
                                       "max_attempts",
                                       "priority",
                                       "state",
                                       "attempt",
                                       "client_token",
                                       "lease",
                                       "cancel_requested",
                                       "cancel_reason",
                                       "execution_handle",
                                       "steps",
                                       "last_completed_step",
                                       "cleanup_needed",
                                       "error",
                                       "blocked_by",
                                       "attempts",
                                       "created_at",
                                       "updated_at",
                                       "version"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(keys, expected);

  EXPECT_EQ(v["id"], "j1");
  EXPECT_EQ(v["kind"], "load");
  EXPECT_EQ(v["target"], "dataset/orders");
  EXPECT_EQ(v["input"], json({{"shop", "A"}, {"from", "2026-05-06T00:00:00Z"}}));
  EXPECT_EQ(v["plan"], json({"FETCH", "VALIDATE", "LOAD", "AGGREGATE"}));
  EXPECT_EQ(v["reuse_on_rerun"], json({"FETCH"}));
  EXPECT_EQ(v["max_attempts"], 3);
  EXPECT_EQ(v["priority"], 4);
  EXPECT_EQ(v["state"], "QUEUED");
  EXPECT_EQ(v["attempt"], 1);
  EXPECT_EQ(v["client_token"], "j1-a1");
  EXPECT_TRUE(v["lease"].is_null());
  EXPECT_EQ(v["cancel_requested"], false);
  EXPECT_TRUE(v["cancel_reason"].is_null());
  EXPECT_TRUE(v["execution_handle"].is_null());
  ASSERT_EQ(v["steps"].size(), 4u);
  EXPECT_EQ(v["steps"][0], json({{"name", "FETCH"},
                                 {"state", "PENDING"},
                                 {"started_at", nullptr},
                                 {"finished_at", nullptr}}));
  EXPECT_TRUE(v["last_completed_step"].is_null());
  EXPECT_EQ(v["cleanup_needed"], false);
  EXPECT_TRUE(v["error"].is_null());
  EXPECT_TRUE(v["blocked_by"].is_null());
  EXPECT_EQ(v["attempts"], json::array({json({{"attempt", 1},
                                              {"state", "QUEUED"},
                                              {"started_at", nullptr},
                                              {"finished_at", nullptr}})}));
  EXPECT_EQ(v["created_at"], format_time_ms(g.now_ms));
  EXPECT_EQ(v["updated_at"], format_time_ms(g.now_ms));
  EXPECT_EQ(v["version"], 1);
}

TEST_F(JobView, ALeaseShowsItsWorkerAndExpiryButNeverItsToken) {
  enqueue("j1");
  claim("w7", {}, 90);
  json v = view_of("j1");
  EXPECT_EQ(v["lease"],
            json({{"worker", "w7"}, {"expires_at", format_time_ms(g.now_ms + 90 * kMsPerS)}}));
  std::string text = v.dump();
  EXPECT_EQ(text.find(token["j1"]), std::string::npos);
  EXPECT_EQ(text.find(sha256_hex(token["j1"])), std::string::npos);
  EXPECT_EQ(v["version"], 2);
}

TEST_F(JobView, ARunningJobShowsItsStepsWithTimesAndOutput) {
  given_running("j1");
  int64_t started = g.now_ms;
  step_start("j1", "FETCH");
  advance_s(3);
  step_done("j1", "FETCH", R"({"rows":10})");
  step_start("j1", "VALIDATE");
  json v = view_of("j1");
  EXPECT_EQ(v["state"], "RUNNING");
  EXPECT_EQ(v["execution_handle"], handle("j1"));
  EXPECT_EQ(v["steps"][0]["state"], "DONE");
  EXPECT_EQ(v["steps"][0]["started_at"], format_time_ms(started));
  EXPECT_EQ(v["steps"][0]["finished_at"], format_time_ms(started + 3 * kMsPerS));
  EXPECT_EQ(v["steps"][0]["output"], json({{"rows", 10}}));
  EXPECT_EQ(v["steps"][1]["state"], "RUNNING");
  EXPECT_TRUE(v["steps"][1]["finished_at"].is_null());
  EXPECT_EQ(v["last_completed_step"], "FETCH");
  EXPECT_EQ(v["attempts"][0]["started_at"], format_time_ms(started));
  EXPECT_EQ(v["updated_at"], format_time_ms(g.now_ms));
}

TEST_F(JobView, BlockedByIsShownOnlyWhileQueued) {
  given_running("j1", "t1");
  enqueue("j2", "t1");
  EXPECT_EQ(view_of("j2")["blocked_by"], json({{"job", "j1"}}));
  EXPECT_TRUE(view_of("j1")["blocked_by"].is_null());
  expect_accepted(cancel("j2"));
  EXPECT_TRUE(view_of("j2")["blocked_by"].is_null()) << "a cancelled job waits for nothing";
}

TEST_F(JobView, AHoldOutranksTheHolderInBlockedBy) {
  given_running("j1", "t1");
  enqueue("j2", "t1");
  expect_accepted(g.run(holds::Place{"h9", "t1", holds::kExecutionStateUnknown, "manual", ""}));
  EXPECT_EQ(view_of("j2")["blocked_by"], json({{"hold", "h9"}}));
}

TEST_F(JobView, InputThatIsNotAnObjectIsShownAsIs) {
  jobs::Enqueue c = job("j1");
  c.input = "null";
  enqueue(c);
  EXPECT_TRUE(view_of("j1")["input"].is_null());
  c = job("j2", "t2");
  c.input = R"(["cursor-x","cursor-y"])";
  enqueue(c);
  EXPECT_EQ(view_of("j2")["input"], json({"cursor-x", "cursor-y"}));
}

// ---- a scenario touching every event type, for the round trips below ----

class JobReplay : public JobTest {
 protected:
  void SetUp() override {
    given_succeeded("done", "t-done");
    given_failed("failed", "t-failed");
    given_cancelled("cancelled", "t-cancelled");
    enqueue("leased", "t-leased");
    ASSERT_EQ(claim("w1", {}, 600), "leased");
    expect_accepted(cancel("leased"));
    enqueue("running", "t-running");
    ASSERT_EQ(claim("w1", {}, 600), "running");
    expect_accepted(start("running"));
    expect_accepted(step_start("running", "FETCH"));
    expect_accepted(heartbeat("running"));
    given_running("retried", "t-retried");
    expect_accepted(step_start("retried", "FETCH"));
    expect_accepted(step_done("retried", "FETCH", R"({"n":1})"));
    expect_accepted(step_start("retried", "VALIDATE"));
    expect_accepted(step_fail("retried", "VALIDATE", true));
    given_running("stale", "t-stale");
    expect_accepted(outcome_unknown("stale", holds::kExecutionStateUnknown));
    given_running("reattached", "t-re");
    expect_accepted(outcome_unknown("reattached", holds::kResultUnknown));
    expect_accepted(reattach_running("reattached"));
    expect_accepted(rerun("done"));
    enqueue("queued", "t-queued");
    enqueue("blocked", "t-running");
  }
};

TEST_F(JobReplay, FoldingTheStoredBytesRebuildsTheLiveStateExactly) {
  State rebuilt = replay(g.log());
  ASSERT_EQ(rebuilt.jobs.by_id.size(), g.state.jobs.by_id.size());
  for (const auto& [id, j] : g.state.jobs.by_id) {
    ASSERT_TRUE(rebuilt.jobs.by_id.count(id)) << id;
    EXPECT_EQ(jobs::to_json(rebuilt.jobs.by_id.at(id)), jobs::to_json(j)) << id;
    EXPECT_EQ(jobs::view(rebuilt, rebuilt.jobs.by_id.at(id)), jobs::view(g.state, j)) << id;
  }
  EXPECT_EQ(ready_ids(rebuilt.jobs), ready_ids(g.state.jobs));
  EXPECT_EQ(rebuilt.jobs.holder, g.state.jobs.holder);
  EXPECT_EQ(rebuilt.jobs.expiries, g.state.jobs.expiries);
  EXPECT_EQ(rebuilt.jobs.count_by_state, g.state.jobs.count_by_state);
}

TEST_F(JobReplay, IndexesMatchARebuildFromTheJobsAlone) {
  // The auditor's view: derive each index from by_id and compare.
  std::map<std::string, size_t> counts = jobs::zero_counts_by_state();
  std::unordered_map<std::string, std::string> holder;
  std::set<std::pair<int64_t, std::string>> expiries;
  size_t queued = 0;
  for (const auto& [id, j] : g.state.jobs.by_id) {
    const jobs::Attempt& a = j.latest();
    ++counts[jobs::to_string(a.state)];
    if (a.state == AttemptState::kQueued) ++queued;
    if (a.state == AttemptState::kLeased || a.state == AttemptState::kRunning) {
      holder[j.target] = id;
      expiries.emplace(a.lease_expires_at_ms, id);
    }
  }
  EXPECT_EQ(g.state.jobs.count_by_state, counts);
  EXPECT_EQ(g.state.jobs.holder, holder);
  EXPECT_EQ(g.state.jobs.expiries, expiries);
  EXPECT_EQ(g.state.jobs.ready.size(), queued);
  EXPECT_EQ(counts.at("QUEUED"), 4u);  // queued, retried, done (rerun), blocked
  EXPECT_EQ(counts.at("STALE"), 1u);
}

TEST_F(JobReplay, AdoptingJobsRebuildsTheIndexes) {
  State restored;
  restored.holds = g.state.holds;
  for (const auto& [id, j] : g.state.jobs.by_id) jobs::adopt(restored, j);
  EXPECT_EQ(ready_ids(restored.jobs), ready_ids(g.state.jobs));
  EXPECT_EQ(restored.jobs.holder, g.state.jobs.holder);
  EXPECT_EQ(restored.jobs.expiries, g.state.jobs.expiries);
  EXPECT_EQ(restored.jobs.count_by_state, g.state.jobs.count_by_state);
  for (const auto& [id, j] : g.state.jobs.by_id) {
    EXPECT_EQ(jobs::view(restored, restored.jobs.by_id.at(id)), jobs::view(g.state, j)) << id;
  }
}

// What a restored state must equal: the entities and every index.
void expect_same_state(const State& restored, const State& original) {
  EXPECT_EQ(restored.last_seq, original.last_seq);
  EXPECT_EQ(restored.last_hash, original.last_hash);
  EXPECT_EQ(ready_ids(restored.jobs), ready_ids(original.jobs));
  EXPECT_EQ(restored.jobs.holder, original.jobs.holder);
  EXPECT_EQ(restored.jobs.expiries, original.jobs.expiries);
  EXPECT_EQ(restored.jobs.count_by_state, original.jobs.count_by_state);
  ASSERT_EQ(restored.jobs.by_id.size(), original.jobs.by_id.size());
  for (const auto& [id, j] : original.jobs.by_id) {
    ASSERT_TRUE(restored.jobs.by_id.count(id)) << id;
    EXPECT_EQ(jobs::to_json(restored.jobs.by_id.at(id)), jobs::to_json(j)) << id;
  }
  ASSERT_EQ(restored.holds.by_id.size(), original.holds.by_id.size());
  for (const auto& [id, h] : original.holds.by_id) {
    ASSERT_TRUE(restored.holds.by_id.count(id)) << id;
    EXPECT_EQ(holds::to_json(restored.holds.by_id.at(id)), holds::to_json(h)) << id;
  }
}

// The State without its finished entities: what a snapshot holds.
State live_part(State s) {
  std::vector<std::string> gone;
  for (const auto& [id, j] : s.jobs.by_id) {
    if (jobs::finished(j)) gone.push_back(id);
  }
  for (const auto& id : gone) jobs::evict(s, id);
  gone.clear();
  for (const auto& [id, h] : s.holds.by_id) {
    if (holds::finished(h)) gone.push_back(id);
  }
  for (const auto& id : gone) holds::evict(s, id);
  return s;
}

TEST_F(JobReplay, TheStateSnapshotIsFormat3AndRestoresEveryLiveEntityAndIndex) {
  g.state.last_seq = 4242;
  g.state.last_hash = sha256("the event before");
  const State live = live_part(g.state);
  ASSERT_GT(live.holds.by_id.size(), 0u);
  ASSERT_LT(live.jobs.by_id.size(), g.state.jobs.by_id.size()) << "some jobs are finished";
  std::string bytes = encode_snapshot(g.state);
  EXPECT_EQ(bytes.substr(0, 8), "RLSNAP3\n");
  State restored;
  ASSERT_TRUE(decode_snapshot(bytes, &restored).ok());
  expect_same_state(restored, live);
  // and its head alone tells the seq and hash it covers
  uint64_t seq = 0;
  Hash hash{};
  ASSERT_TRUE(decode_snapshot_head(bytes, &seq, &hash).ok());
  EXPECT_EQ(seq, 4242u);
  EXPECT_EQ(hash, sha256("the event before"));
  // which is verified like every record: a flipped bit in it is Corruption
  // (after the magic, the record's length and SHA-256: inside the head's buffer)
  bytes[8 + 8 + 32 + 4] ^= 0x01;
  EXPECT_EQ(decode_snapshot_head(bytes, &seq, &hash).code(), Status::Code::kCorruption);
}

TEST_F(JobReplay, ASnapshotOfManyJobsSpansChunksAndRestoresEveryOne) {
  // 3,000 live jobs with 4 KiB of input each: about three times a chunk.
  const jobs::Job model = g.state.jobs.by_id.at("running");
  for (int i = 0; i < 3000; ++i) {
    jobs::Job j = model;
    j.id = "many-" + std::to_string(i);
    j.target = "t-many-" + std::to_string(i);
    j.input = json{{"pad", std::string(4096, static_cast<char>('a' + i % 26))}}.dump();
    j.enqueue_seq = 1000 + i;
    jobs::adopt(g.state, std::move(j));
  }
  std::string bytes = encode_snapshot(g.state);
  ASSERT_GT(bytes.size(), size_t{12} << 20);
  State restored;
  ASSERT_TRUE(decode_snapshot(bytes, &restored).ok());
  expect_same_state(restored, live_part(g.state));
}

// A format 3 record framed as projections/snapshot_format3.h lays it out:
// length (8 bytes, little endian), SHA-256, the buffer, zeros up to 8.
std::string record_of(const flatbuffers::FlatBufferBuilder& b) {
  std::string payload(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(uint64_t{payload.size()} >> (8 * i)));
  Hash h = sha256(payload);
  out.append(reinterpret_cast<const char*>(h.data()), h.size());
  out += payload;
  out.append((8 - payload.size() % 8) % 8, '\0');
  return out;
}

std::string head_record(uint64_t jobs_n) {
  flatbuffers::FlatBufferBuilder b;
  Hash h = sha256("x");
  b.Finish(snap::CreateHead(b, 3, b.CreateVector(h.data(), h.size()), jobs_n, 0, 0));
  return record_of(b);
}

void expect_corruption_and_state_untouched(const std::string& bytes, const std::string& what) {
  State restored;
  restored.last_seq = 7;
  Status st = decode_snapshot(bytes, &restored);
  EXPECT_EQ(st.code(), Status::Code::kCorruption) << what << ": " << st.message();
  EXPECT_EQ(restored.last_seq, 7u) << what << ": left as it was";
  EXPECT_TRUE(restored.jobs.by_id.empty()) << what;
}

TEST_F(JobReplay, ADamagedSnapshotIsCorruptionNeverAPartialState) {
  g.state.last_hash = sha256("x");
  const std::string good = encode_snapshot(g.state);
  const size_t head_at = 8, chunk_at = 8 + 40 + 64;  // the head record is under 64 bytes
  ASSERT_GT(good.size(), chunk_at + 200);
  std::vector<std::pair<std::string, std::string>> cases = {
      {"empty", ""},
      {"magic only", good.substr(0, 8)},
      {"cut in the head", good.substr(0, head_at + 20)},
      {"cut in a chunk", good.substr(0, good.size() / 2)},
      {"last byte lost", good.substr(0, good.size() - 1)},
      {"a byte added", good + "x"},
      {"JSON, no format", "{}"},
      {"not JSON", "not json"},
  };
  for (size_t at : {head_at + 3, head_at + 12, head_at + 45, chunk_at + 4, chunk_at + 50,
                    chunk_at + 150, good.size() - 20}) {
    std::string flipped = good;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x20);
    cases.emplace_back("byte " + std::to_string(at) + " flipped", flipped);
  }
  {
    // Hashed and verifiable, but the head counts a job that is not there.
    cases.emplace_back("a job missing", std::string("RLSNAP3\n") + head_record(1));
  }
  {
    // Hashed and verifiable, but an attempt state no binary writes.
    flatbuffers::FlatBufferBuilder b;
    std::vector<flatbuffers::Offset<snap::Attempt>> attempts = {
        snap::CreateAttempt(b, 1, /*state=*/200)};
    std::vector<flatbuffers::Offset<snap::Job>> list = {
        snap::CreateJob(b, b.CreateString("j"), 0, b.CreateString("t"), 0, 0, 0, 3, 0, 0,
                        b.CreateVector(attempts))};
    b.Finish(snap::CreateChunk(b, b.CreateVector(list)));
    cases.emplace_back("an unknown attempt state",
                       std::string("RLSNAP3\n") + head_record(1) + record_of(b));
  }
  {
    // A verified record of the wrong size claim: length larger than the rest.
    std::string long_claim = good;
    long_claim[head_at + 6] = '\x7f';
    cases.emplace_back("a length past the end", long_claim);
  }
  for (const auto& [what, bytes] : cases) expect_corruption_and_state_untouched(bytes, what);
}

// Formats 1 and 2 (JSON) are no longer read: they are Corruption, which a
// start answers by folding the log (tests/engine/restart_test.cc).
TEST_F(JobReplay, ASnapshotOfAnOlderJSONFormatIsCorruptionAndLeavesTheStateAlone) {
  g.state.last_hash = sha256("written by format 2");
  json head = {{"format", 2}, {"seq", 77},       {"last_hash", to_hex(g.state.last_hash)},
               {"jobs", 1},   {"connectors", 0}, {"holds", 0}};
  const std::string lines =
      head.dump() + "\n" + json{{"job", jobs::to_json(g.state.jobs.by_id.at("queued"))}}.dump();
  json document = {{"format", 1}, {"seq", 99}, {"last_hash", to_hex(g.state.last_hash)}};
  document["jobs"] = json::array({jobs::to_json(g.state.jobs.by_id.at("queued"))});
  document["connectors"] = json::array();
  document["holds"] = json::array();
  for (const auto& [what, bytes] : std::vector<std::pair<std::string, std::string>>{
           {"format 2", lines}, {"format 1", document.dump()}}) {
    expect_corruption_and_state_untouched(bytes, what);
    uint64_t seq = 5;
    Hash hash{};
    EXPECT_EQ(decode_snapshot_head(bytes, &seq, &hash).code(), Status::Code::kCorruption) << what;
    EXPECT_EQ(seq, 5u) << what;
  }
}

TEST_F(JobReplay, AdoptingAJobAgainReplacesItsIndexEntries) {
  jobs::Job leased = job_of("leased");
  jobs::Job older = leased;
  older.latest().state = AttemptState::kQueued;
  older.latest().lease_expires_at_ms = 0;
  jobs::adopt(g.state, older);
  EXPECT_EQ(g.state.jobs.holder.count("t-leased"), 0u);
  jobs::adopt(g.state, leased);
  EXPECT_EQ(g.state.jobs.holder.at("t-leased"), "leased");
  EXPECT_EQ(replay(g.log()).jobs.count_by_state, g.state.jobs.count_by_state);
}

TEST_F(JobReplay, EvictRemovesAFinishedJobAndKeepsALiveOne) {
  size_t failed = g.state.jobs.count_by_state.at("FAILED");
  jobs::evict(g.state, "failed");
  EXPECT_EQ(g.state.jobs.by_id.count("failed"), 0u);
  EXPECT_EQ(g.state.jobs.count_by_state.at("FAILED"), failed - 1);
  jobs::evict(g.state, "running");
  EXPECT_EQ(g.state.jobs.by_id.count("running"), 1u);
  EXPECT_EQ(g.state.jobs.holder.at("t-running"), "running");
}

TEST_F(JobReplay, AHydratedJobTakesCommandsLikeOneThatNeverLeft) {
  jobs::Job stored = job_of("failed");
  jobs::evict(g.state, "failed");
  jobs::adopt(g.state, std::move(stored));
  expect_accepted(rerun("failed"));
  EXPECT_EQ(state_of("failed"), AttemptState::kQueued);
  EXPECT_EQ(jobs::to_json(replay(g.log()).jobs.by_id.at("failed")),
            jobs::to_json(job_of("failed")));
}

TEST_F(JobSnapshot, CountsListEveryStateFromTheStart) {
  State empty;
  ASSERT_EQ(empty.jobs.count_by_state.size(), 8u);
  EXPECT_EQ(empty.jobs.count_by_state.count("YIELDED"), 1u);
  for (const auto& [state, count] : empty.jobs.count_by_state) {
    EXPECT_TRUE(jobs::attempt_state_from(state).has_value()) << state;
    EXPECT_EQ(count, 0u);
  }
}

TEST_F(JobSnapshot, StateNamesRoundTrip) {
  for (auto st :
       {AttemptState::kQueued, AttemptState::kLeased, AttemptState::kRunning, AttemptState::kStale,
        AttemptState::kSucceeded, AttemptState::kFailed, AttemptState::kCancelled}) {
    EXPECT_EQ(jobs::attempt_state_from(jobs::to_string(st)), st);
  }
  EXPECT_FALSE(jobs::attempt_state_from("queued").has_value());
  EXPECT_TRUE(jobs::is_terminal(AttemptState::kCancelled));
  EXPECT_FALSE(jobs::is_terminal(AttemptState::kStale));
}

}  // namespace
}  // namespace runledger::job_tests
