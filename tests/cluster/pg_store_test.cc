// The PostgreSQL store on its own, against a real server: what a leader's
// append writes, what a standby's refuses, and the hourly purge of kept
// replies reaching the database as well as the node's folder.
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "base/sha256.h"
#include "cluster/pg_schema.h"
#include "cluster/pg_store.h"
#include "tests/cluster/pg_schema_fixture.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

// A kept reply's record: its first 8 bytes say when (big-endian ms).
std::string record_at(int64_t ms, const std::string& rest) {
  std::string r(8, '\0');
  for (int i = 7; i >= 0; --i, ms >>= 8) r[static_cast<size_t>(i)] = static_cast<char>(ms & 0xff);
  return r + rest;
}

class PgStoreTest : public PgSchemaTest {
 protected:
  void SetUp() override {
    PgSchemaTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(pg::prepare_statements(*admin_).ok());
    pg::Result row;
    ASSERT_TRUE(admin_
                    ->query_prepared(
                        pg::kAcquire,
                        {pg::Param::text("t"), pg::Param::text(""), pg::Param::text("60")}, &row)
                    .ok());
    ASSERT_EQ(row.rows(), 1);
    epoch_ = static_cast<uint64_t>(row.int64(0, 0));
    std::unique_ptr<EventStore> local;
    ASSERT_TRUE(open_rocksdb_store(dir_.path(), StoreOptions{}, &local).ok());
    store_ = std::make_unique<PgStore>(std::move(local), db_->dsn(), 10'000);
  }
  // Leads from an empty log, for longer than a test runs.
  Status lead() {
    return store_->lead(epoch_, 0, Hash{},
                        std::chrono::steady_clock::now() + std::chrono::seconds(50));
  }
  TempDir dir_;
  uint64_t epoch_ = 0;
  std::unique_ptr<PgStore> store_;
};

TEST_F(PgStoreTest, ALeadersPurgeDeletesOldKeptRepliesInTheDatabaseToo) {
  ASSERT_TRUE(lead().ok());
  AppendBatch b;
  b.idempotency.emplace_back("old-key", record_at(1'000, "old"));
  b.idempotency.emplace_back("new-key", record_at(9'000, "new"));
  ASSERT_TRUE(store_->append(b).ok());
  ASSERT_EQ(db_->psql("SELECT count(*) FROM runledger_idempotency"), "2");
  // When the leader purges what was kept before 5,000 ms
  ASSERT_TRUE(store_->purge_idempotency(5'000).ok());
  // Then the old record is gone from the database and the folder; the new one stays
  EXPECT_EQ(db_->psql("SELECT encode(key, 'escape') FROM runledger_idempotency"), "new-key");
  std::string value;
  EXPECT_FALSE(store_->get_idempotency("old-key", &value).ok());
  EXPECT_TRUE(store_->get_idempotency("new-key", &value).ok());
}

// The records of one batch are written by one statement, which may not
// update a row twice: a key twice in a batch keeps its last record.
TEST_F(PgStoreTest, AKeyTwiceInOneBatchKeepsItsLastRecord) {
  ASSERT_TRUE(lead().ok());
  AppendBatch b;
  b.idempotency.emplace_back("k", record_at(1'000, "first"));
  b.idempotency.emplace_back("other", record_at(1'000, "other"));
  b.idempotency.emplace_back("k", record_at(2'000, "last"));
  Status st = store_->append(b);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(db_->psql("SELECT encode(substr(record, 9), 'escape') || ' ' || recorded_ms FROM "
                      "runledger_idempotency ORDER BY key"),
            "last 2000\nother 1000");
}

TEST_F(PgStoreTest, AStoreThatDoesNotLeadWritesNothingNoReplicaHolds) {
  AppendBatch b;
  b.idempotency.emplace_back("k", record_at(1'000, "r"));
  Status st = store_->append(b);
  EXPECT_EQ(st.code(), Status::Code::kUnavailable) << st.ToString();
  EXPECT_EQ(db_->psql("SELECT count(*) FROM runledger_idempotency"), "0");
  std::string value;
  EXPECT_FALSE(store_->get_idempotency("k", &value).ok());
}

// The local deadline alone: the database still names this node's epoch (its
// lease there runs for a minute), yet once the node's own deadline has
// passed it answers no write, as another node may lead by then if its
// clock runs ahead.
TEST_F(PgStoreTest, ALeaderPastItsLocalDeadlineWritesNothingThoughTheDatabaseStillNamesIt) {
  using std::chrono::milliseconds;
  // Two seconds: room for the first write's connection on a busy machine.
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(2'000);
  ASSERT_TRUE(store_->lead(epoch_, 0, Hash{}, deadline).ok());
  AppendBatch first;
  first.idempotency.emplace_back("in-time", record_at(1'000, "r"));
  ASSERT_TRUE(store_->append(first).ok());
  std::this_thread::sleep_until(deadline + milliseconds(100));
  AppendBatch late;
  late.idempotency.emplace_back("too-late", record_at(2'000, "r"));
  Status st = store_->append(late);
  EXPECT_EQ(st.code(), Status::Code::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find("lease ran out"), std::string::npos) << st.ToString();
  EXPECT_EQ(db_->psql("SELECT encode(key, 'escape') FROM runledger_idempotency"), "in-time");
  EXPECT_EQ(db_->psql("SELECT epoch FROM runledger_leader"), std::to_string(epoch_))
      << "the database's row still names this node: the refusal was the local rule's";
  std::string value;
  EXPECT_FALSE(store_->get_idempotency("too-late", &value).ok());
  // And it has stepped down: an extension of the lost epoch does not revive it.
  store_->extend(epoch_, std::chrono::steady_clock::now() + std::chrono::seconds(50));
  EXPECT_EQ(store_->append(late).code(), Status::Code::kUnavailable);
}

}  // namespace
}  // namespace runledger::testing
