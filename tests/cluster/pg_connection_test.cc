// A connection's promise that a frozen client cannot hold a lock for ever
// (cluster/pg_connection.h): a transaction left open on it ends once it has
// waited on its client longer than the connection's timeout, and another
// session then takes the row it had locked, as a standby takes the leader
// row over from a leader frozen in the middle of sending a batch.
#include <chrono>

#include <gtest/gtest.h>

#include "cluster/pg_connection.h"
#include "tests/cluster/pg_schema_fixture.h"

namespace runledger::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kFrozenTimeoutMs = 1'000;
constexpr const char* kTakeRow = "UPDATE runledger_leader SET holder = 'next' WHERE id = 1";

class PgConnectionTest : public PgSchemaTest {
 protected:
  // A session that locks the leader row and then sends nothing more.
  std::unique_ptr<pg::Connection> frozen_holder(bool server_timeout) {
    std::unique_ptr<pg::Connection> c;
    EXPECT_TRUE(pg::Connection::open(db_->dsn(), kFrozenTimeoutMs, &c).ok());
    if (!server_timeout) {
      EXPECT_TRUE(c->exec("SET idle_in_transaction_session_timeout = 0").ok());
    }
    EXPECT_TRUE(c->exec("BEGIN; UPDATE runledger_leader SET holder = 'frozen' WHERE id = 1").ok());
    return c;
  }
  // Sessions whose transaction waits on their client.
  std::string idle_in_transaction() const {
    return db_->psql("SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction'");
  }
};

TEST_F(PgConnectionTest, ATransactionItsFrozenClientLeftOpenEndsAndFreesTheRow) {
  auto frozen = frozen_holder(/*server_timeout=*/true);
  std::unique_ptr<pg::Connection> next;
  ASSERT_TRUE(pg::Connection::open(db_->dsn(), 20'000, &next).ok());
  const auto start = Clock::now();
  Status st = next->query(kTakeRow, {});
  const double waited = std::chrono::duration<double>(Clock::now() - start).count();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_LT(waited, 10.0) << "the row was taken only after the frozen session's end";
  EXPECT_EQ(db_->psql("SELECT holder FROM runledger_leader"), "next");
  EXPECT_EQ(idle_in_transaction(), "0") << "the frozen session was ended";
}

// Positive control: the same frozen session without the server's timeout
// keeps the row, and the next session's update gets no answer in time. (It
// still waits on the server, and takes the row once the frozen one ends.)
TEST_F(PgConnectionTest, WithoutTheTimeoutAFrozenSessionKeepsTheRowLocked) {
  auto frozen = frozen_holder(/*server_timeout=*/false);
  std::unique_ptr<pg::Connection> next;
  ASSERT_TRUE(pg::Connection::open(db_->dsn(), 3'000, &next).ok());
  Status st = next->query(kTakeRow, {});
  EXPECT_EQ(st.code(), Status::Code::kUnavailable) << st.ToString();
  EXPECT_EQ(idle_in_transaction(), "1") << "the frozen session still holds the row";
}

}  // namespace
}  // namespace runledger::testing
