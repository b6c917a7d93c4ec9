// A standby's engine (docs/cluster.md): it folds the log's events another
// engine decided, as a Replica, into the same State and the same stored
// views as that engine built; it refuses a replica that does not continue
// its log; and while its writes are refused, commands get the refusal and
// nothing is written, until accept_writes().
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/engine/engine_harness.h"
#include "tests/engine/state_digest.h"

namespace runledger::testing {
namespace {

Reply replica_refusal() {
  return Reply::error(503, "not_leader", "a standby", {{"leader", nullptr}});
}

EngineOptions standby_options() {
  EngineOptions o = test_engine_options();
  o.refuse_writes = replica_refusal();
  return o;
}

// The events of `store` after `after` (up to `until`, 0: the end) as a replica.
std::shared_ptr<Replica> replica_of(const EventStore& store, uint64_t after, uint64_t until = 0) {
  auto r = std::make_shared<Replica>();
  EXPECT_TRUE(store
                  .read_range(after, until,
                              [&](const fb::Event& e, std::string_view bytes) {
                                EncodedEvent ev;
                                ev.seq = e.seq();
                                ev.stream = e.stream()->str();
                                ev.stream_version = e.stream_version();
                                ev.bytes = std::string(bytes);
                                r->events.push_back(std::move(ev));
                                return true;
                              })
                  .ok());
  return r;
}

Reply fold_replica(Engine& e, std::shared_ptr<const Replica> replica) {
  Request req;
  req.replica = std::move(replica);
  return e.execute(std::move(req));
}

TEST(Replica, AStandbyFoldsTheLeadersLogIntoTheSameStateAndViews) {
  // Given a leader that ran jobs to the end, and a standby
  EngineHarness leader;
  for (int i = 0; i < 5; ++i) {
    const std::string id = "j" + std::to_string(i);
    ASSERT_EQ(run_w1_job(leader.engine(), id, "k" + std::to_string(i), "t", nullptr), "");
  }
  ASSERT_EQ(run(leader.engine(), enqueue_command("live", "k", "t")).status, 200);
  EngineHarness standby(standby_options());
  // When the standby applies the leader's log in two replicas
  const uint64_t half = leader.store().last_seq() / 2;
  EXPECT_EQ(fold_replica(standby.engine(), replica_of(leader.store(), 0, half)).status, 200);
  EXPECT_EQ(fold_replica(standby.engine(), replica_of(leader.store(), half)).status, 200);
  // Then it holds the same state, its folder the same log, and a finished
  // job's stored view is the leader's
  EXPECT_EQ(standby.store().last_seq(), leader.store().last_seq());
  EXPECT_EQ(standby.store().last_hash(), leader.store().last_hash());
  EXPECT_TRUE(same_state(engine_digest(leader.engine()), engine_digest(standby.engine())));
  std::string a, b;
  ASSERT_TRUE(leader.store().get_view("job/j0", &a).ok());
  ASSERT_TRUE(standby.store().get_view("job/j0", &b).ok());
  EXPECT_EQ(a, b);
  // and after a restart it folds to the same state from its own folder
  standby.reopen();
  EXPECT_TRUE(same_state(engine_digest(leader.engine()), engine_digest(standby.engine())));
}

TEST(Replica, AReplicaThatDoesNotContinueTheLogIsRefusedWhole) {
  EngineHarness leader;
  for (const char* id : {"a", "b", "c"}) {
    ASSERT_EQ(run(leader.engine(), enqueue_command(id, "k", "t")).status, 200);
  }
  EngineHarness standby(standby_options());
  // When the first event is skipped
  Reply r = fold_replica(standby.engine(), replica_of(leader.store(), 1));
  // Then nothing of it is folded or written
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(standby.store().last_seq(), 0u);
  // and a replica whose chain is broken (another log's event) likewise
  EngineHarness other;
  ASSERT_EQ(run(other.engine(), enqueue_command("x", "k", "t")).status, 200);
  ASSERT_EQ(fold_replica(standby.engine(), replica_of(leader.store(), 0, 1)).status, 200);
  auto foreign = replica_of(other.store(), 0);
  foreign->events[0].seq = 2;  // the seq fits, the bytes say seq 1 and chain elsewhere
  EXPECT_EQ(fold_replica(standby.engine(), foreign).status, 409);
  EXPECT_EQ(standby.store().last_seq(), 1u);
}

TEST(Replica, CommandsGetTheRefusalUntilWritesAreAccepted) {
  EngineHarness standby(standby_options());
  // Given a standby
  EXPECT_FALSE(standby.engine().writable());
  // When a command comes, also one with an Idempotency-Key
  Reply r = run(standby.engine(), enqueue_command("a", "k", "t"));
  Reply keyed = standby.engine().execute(command_request(enqueue_command("b", "k", "t"), "key-1"));
  // Then it gets the refusal and nothing is written or kept
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(body_json(r).value("code", ""), "not_leader");
  EXPECT_EQ(keyed.status, 503);
  EXPECT_EQ(standby.store().last_seq(), 0u);
  std::string record;
  EXPECT_FALSE(standby.store().get_idempotency("key-1", &record).ok());
  // and once it takes writes, the same command is decided
  standby.engine().accept_writes();
  EXPECT_TRUE(standby.engine().writable());
  EXPECT_EQ(run(standby.engine(), enqueue_command("a", "k", "t")).status, 200);
  // and refused again when it steps down
  standby.engine().refuse_writes(replica_refusal());
  EXPECT_EQ(body_json(run(standby.engine(), enqueue_command("c", "k", "t"))).value("code", ""),
            "not_leader");
}

TEST(Replica, ReadsSayHowFarTheLogGoes) {
  EngineHarness h;
  ASSERT_EQ(run(h.engine(), enqueue_command("a", "k", "t")).status, 200);
  Reply r = h.engine().read([](const State&, const Decision*) { return Reply{200, "{}"}; });
  EXPECT_NE(r.headers.find("X-Runledger-Seq: 1\r\n"), std::string::npos) << r.headers;
}

}  // namespace
}  // namespace runledger::testing
