// runledger verify on damaged logs: one test per damage it must catch, each
// asserting the exit code and the first bad seq it names; and clean logs,
// which it must pass.
#include <gtest/gtest.h>

#include <regex>

#include "events/event_codec.h"
#include "events/keys.h"
#include "tests/tools/tools_test_support.h"

namespace runledger::testing {
namespace {

constexpr int kExitDamaged = 1;
// The event the damage tests alter: in the middle, with events after it.
constexpr uint64_t kDamagedSeq = 5;

// The seq of "first bad seq N: ..." in verify's output, 0 when absent.
uint64_t first_bad_seq(const CliResult& r) {
  std::smatch m;
  if (!std::regex_search(r.out, m, std::regex("first bad seq ([0-9]+): "))) return 0;
  return std::stoull(m[1]);
}

// A log of 10 events: j1 runs to success (8 events), j2 is enqueued and
// claimed. The engine is closed so the folder can be altered underneath.
class VerifyDamage : public ::testing::Test {
 protected:
  void SetUp() override {
    rig_.run(enqueue("j1", "t1"));
    rig_.run(claim("j1", "w1", "token-1"));
    rig_.run(jobs::Start{"j1", "token-1", "exec-1"});
    for (const char* step : {"A", "B"}) {
      rig_.run(jobs::StepStart{"j1", step, "token-1"});
      rig_.run(jobs::StepDone{"j1", step, "token-1", ""});
    }
    rig_.run(enqueue("j2", "t2"));
    rig_.run(claim("j2", "w2", "token-2"));
    ASSERT_EQ(rig_.last_seq(), 10u);
    rig_.close();
  }
  CliResult verify() { return run_cli({"verify", "--data", rig_.data()}); }

  EngineRig rig_;
};

TEST_F(VerifyDamage, CleanLogPassesWithASummary) {
  CliResult r = verify();
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ok: 10 events, 2 streams, last seq 10, last hash "), std::string::npos)
      << r.out;
  EXPECT_EQ(r.err.find("snapshot"), std::string::npos) << r.err;
}

TEST_F(VerifyDamage, ADamagedSnapshotIsNotedButTheLogIsClean) {
  RawDb(rig_.data()).put(keys::kSnapshotFamily, keys::kSnapshotKey, "not a snapshot");
  CliResult r = verify();
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ok: 10 events"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("the projection snapshot does not agree with the log and a start will set "
                       "it aside"),
            std::string::npos)
      << r.err;
}

TEST_F(VerifyDamage, FlippedByteInValue) {
  {
    RawDb db(rig_.data());
    std::string bytes = db.event(kDamagedSeq);
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0xFF);
    db.put_event(kDamagedSeq, bytes);
  }
  CliResult r = verify();
  EXPECT_EQ(r.code, kExitDamaged) << r.out << r.err;
  EXPECT_EQ(first_bad_seq(r), kDamagedSeq) << r.out;
}

TEST_F(VerifyDamage, RemovedEvent) {
  RawDb(rig_.data()).remove_event(kDamagedSeq);
  CliResult r = verify();
  EXPECT_EQ(r.code, kExitDamaged) << r.out << r.err;
  EXPECT_EQ(first_bad_seq(r), kDamagedSeq) << r.out;
}

TEST_F(VerifyDamage, SwappedEvents) {
  {
    RawDb db(rig_.data());
    std::string a = db.event(kDamagedSeq), b = db.event(kDamagedSeq + 1);
    db.put_event(kDamagedSeq, b);
    db.put_event(kDamagedSeq + 1, a);
  }
  CliResult r = verify();
  EXPECT_EQ(r.code, kExitDamaged) << r.out << r.err;
  EXPECT_EQ(first_bad_seq(r), kDamagedSeq) << r.out;
}

TEST_F(VerifyDamage, BrokenChain) {
  {
    RawDb db(rig_.data());
    Hash wrong;
    wrong.fill(0xAB);
    db.put_event(kDamagedSeq, with_prev_hash(db.event(kDamagedSeq), wrong));
  }
  CliResult r = verify();
  EXPECT_EQ(r.code, kExitDamaged) << r.out << r.err;
  EXPECT_EQ(first_bad_seq(r), kDamagedSeq) << r.out;
  EXPECT_NE(r.out.find("prev_hash"), std::string::npos) << r.out;
}

TEST_F(VerifyDamage, UndecodablePayload) {
  {
    RawDb db(rig_.data());
    db.put_event(kDamagedSeq, with_unknown_payload_type(db.event(kDamagedSeq)));
  }
  CliResult r = verify();
  EXPECT_EQ(r.code, kExitDamaged) << r.out << r.err;
  EXPECT_EQ(first_bad_seq(r), kDamagedSeq) << r.out;
}

// Events encoded and hash-chained exactly as the engine would, appended
// through the store: only the transition rules can object to them.
class ChainedLog {
 public:
  explicit ChainedLog(const std::string& dir) {
    Status s = open_rocksdb_store(dir, StoreOptions{}, &store_);
    if (!s.ok()) throw std::runtime_error(s.ToString());
  }
  template <typename T>
  Status append(const std::string& stream, T table) {
    fb::PayloadUnion payload;
    payload.Set(std::move(table));
    EventDraft d;
    d.seq = ++seq_;
    d.stream = stream;
    d.stream_version = ++versions_[stream];
    d.recorded_at_ms = 1'700'000'000'000 + static_cast<int64_t>(seq_) * 1000;
    d.actor = "tester";
    const std::string command_id = "c-" + std::to_string(seq_);  // outlives the view
    d.command_id = command_id;
    d.prev_hash = hash_;
    d.payload = &payload;
    EncodedEvent e;
    encode_event(d, &e.bytes);
    e.seq = d.seq;
    e.stream = stream;
    e.stream_version = d.stream_version;
    hash_ = sha256(e.bytes);
    AppendBatch b;
    b.events.push_back(std::move(e));
    return store_->append(b);
  }

 private:
  std::unique_ptr<EventStore> store_;
  uint64_t seq_ = 0;
  Hash hash_{};
  std::map<std::string, uint32_t> versions_;
};

fb::JobEnqueuedT enqueued(const std::string& target) {
  fb::JobEnqueuedT e;
  e.kind = "k";
  e.target = target;
  e.input = "null";
  e.plan = {"A", "B"};
  e.attempt = 1;
  return e;
}

TEST(Verify, ForbiddenTransition) {
  TempDir dir;
  {
    ChainedLog log(dir.path());
    ASSERT_TRUE(log.append("job/j1", enqueued("t1")).ok());
    ASSERT_TRUE(log.append("job/j2", enqueued("t2")).ok());
    fb::JobStartedT started;  // j1's attempt 1 is QUEUED: nobody leased it
    started.attempt = 1;
    started.worker = "w1";
    ASSERT_TRUE(log.append("job/j1", started).ok());
    ASSERT_TRUE(log.append("job/j2", fb::AttemptCancelledT{}).ok());
  }
  CliResult r = run_cli({"verify", "--data", dir.path()});
  EXPECT_EQ(r.code, kExitDamaged) << r.out << r.err;
  EXPECT_EQ(first_bad_seq(r), 3u) << r.out;
  EXPECT_NE(r.out.find("attempt 1 is QUEUED, JobStarted needs LEASED"), std::string::npos) << r.out;
}

TEST(Verify, MixedWorkloadOfTheEngineIsClean) {
  EngineRig rig(/*snapshot_every_events=*/10);
  run_mixed_workload(rig);
  const uint64_t last = rig.last_seq();
  CliResult r = run_cli({"verify", "--data", rig.data()});  // beside the running engine
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("last seq " + std::to_string(last) + ","), std::string::npos) << r.out;
}

// Yields (docs/domain.md 1.9) and reattaches that observe one step's exit (1.8),
// from a RUNNING and from a STALE attempt, as the engine writes them.
TEST(Verify, ALogWithYieldsAndStepExitsIsClean) {
  EngineRig rig(/*snapshot_every_events=*/10);
  auto step_exit = [](const std::string& id, const std::string& step, int code,
                      const std::string& token) {
    jobs::Reattach r{id, "w9", "exec-" + id, "exited", code, std::nullopt, token};
    r.step = step;
    r.retryable = true;
    return r;
  };
  ASSERT_EQ(rig.run(enqueue("j1", "t1", /*max_attempts=*/1)).status, 200);
  ASSERT_EQ(rig.run(claim("j1", "w1", "token-1")).status, 200);
  ASSERT_EQ(rig.run(jobs::Start{"j1", "token-1", "exec-j1"}).status, 200);
  ASSERT_EQ(rig.run(jobs::StepStart{"j1", "A", "token-1"}).status, 200);
  ASSERT_EQ(rig.run(jobs::StepDone{"j1", "A", "token-1", ""}).status, 200);
  ASSERT_EQ(rig.run(jobs::Yield{"j1", "token-1", "redeploy"}).status, 200);
  ASSERT_EQ(rig.run(claim("j1", "w2", "token-1b")).status, 200);  // attempt 2, A reused
  ASSERT_EQ(rig.run(jobs::Start{"j1", "token-1b", "exec-j1"}).status, 200);
  ASSERT_EQ(rig.run(jobs::StepStart{"j1", "B", "token-1b"}).status, 200);
  ASSERT_EQ(rig.run(step_exit("j1", "B", 0, "token-1c")).status, 200);  // SUCCEEDED

  ASSERT_EQ(rig.run(enqueue("j2", "t2")).status, 200);
  ASSERT_EQ(rig.run(claim("j2", "w1", "token-2", 10)).status, 200);
  ASSERT_EQ(rig.run(jobs::Start{"j2", "token-2", "exec-j2"}).status, 200);
  ASSERT_EQ(rig.run(jobs::StepStart{"j2", "A", "token-2"}).status, 200);
  rig.clock().advance_ms(11'000);
  rig.tick();  // STALE, a hold placed
  ASSERT_FALSE(rig.open_hold_of("j2").empty());
  ASSERT_EQ(rig.run(step_exit("j2", "A", 0, "token-2b")).status, 200);  // RUNNING again
  ASSERT_TRUE(rig.open_hold_of("j2").empty());
  ASSERT_EQ(rig.run(jobs::StepStart{"j2", "B", "token-2b"}).status, 200);
  ASSERT_EQ(rig.run(step_exit("j2", "B", 3, "token-2c")).status, 200);  // FAILED, retried

  CliResult r = run_cli({"verify", "--data", rig.data()});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("last seq " + std::to_string(rig.last_seq()) + ","), std::string::npos)
      << r.out;
}

TEST(Verify, AYieldOfAnAttemptNobodyStartedIsAForbiddenTransition) {
  TempDir dir;
  {
    ChainedLog log(dir.path());
    ASSERT_TRUE(log.append("job/j1", enqueued("t1")).ok());
    fb::AttemptYieldedT yielded;
    yielded.attempt = 1;
    yielded.next_attempt = 2;
    ASSERT_TRUE(log.append("job/j1", yielded).ok());
  }
  CliResult r = run_cli({"verify", "--data", dir.path()});
  EXPECT_EQ(r.code, kExitDamaged) << r.out << r.err;
  EXPECT_EQ(first_bad_seq(r), 2u) << r.out;
  EXPECT_NE(r.out.find("attempt 1 is QUEUED, AttemptYielded needs RUNNING"), std::string::npos)
      << r.out;
}

TEST(Verify, FolderWithoutAStoreIsAnError) {
  TempDir dir;
  CliResult r = run_cli({"verify", "--data", dir.path() + "/nothing-here"});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.code, kExitDamaged) << "a missing folder is not a damaged log: " << r.err;
  EXPECT_NE(r.err.find("holds no runledger store"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace runledger::testing
