// The harness of the cluster tests, checked against itself: real PostgreSQL
// servers keep what they committed across a restart, a synchronous standby
// has every committed row when its primary is lost and takes writes once
// promoted, and the proxy's cuts look to a client like a lost database
// (refused at once) or a partition (no answer until its own timeout). The
// cluster tests' conclusions rest on these behaving as they claim.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "cluster/pg_connection.h"
#include "tests/support/pg_server.h"
#include "tests/support/subprocess.h"
#include "tests/support/tcp_proxy.h"

namespace runledger::testing {
namespace {

using namespace std::chrono_literals;
using HarnessClock = std::chrono::steady_clock;

// Replication applies a commit on the standby shortly after the primary
// reports it; a loaded machine may take seconds.
constexpr auto kHarnessApplyWait = 30s;
// libpq's connect_timeout against a blackhole, and what the connect must at
// least take then (libpq counts whole seconds, and may round down).
constexpr int kHarnessBlackholeTimeoutS = 3;
constexpr auto kHarnessBlackholeAtLeast = 2s;
// Against a cut that refuses, the client could wait this long, but a reset
// fails it at once: anything under half of it is not a timeout, however
// loaded the machine.
constexpr int kHarnessRefuseTimeoutS = 10;
constexpr auto kHarnessFailFastWithin = 5s;
constexpr int kHarnessStatementTimeoutMs = 10'000;

bool harness_eventually(HarnessClock::duration wait, const std::function<bool()>& done) {
  const auto deadline = HarnessClock::now() + wait;
  while (!done()) {
    if (HarnessClock::now() >= deadline) return false;
    std::this_thread::sleep_for(100ms);
  }
  return true;
}

bool harness_process_gone(pid_t pid) {
  const std::string stat = read_whole_file("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z';
}

std::string harness_with_timeout(std::string dsn, int seconds) {
  const std::string from = "connect_timeout=5";
  const size_t at = dsn.find(from);
  if (at != std::string::npos) {
    dsn.replace(at, from.size(), "connect_timeout=" + std::to_string(seconds));
  }
  return dsn;
}

// psql through `dsn`: whether it succeeded, and how long it took.
struct HarnessAttempt {
  bool ok = false;
  std::string out, error;
  HarnessClock::duration took{};
};

HarnessAttempt harness_psql(const std::string& dsn, const std::string& sql) {
  HarnessAttempt a;
  const auto start = HarnessClock::now();
  a.out = PgServer::psql_at(dsn, sql, &a.ok, &a.error);
  a.took = HarnessClock::now() - start;
  return a;
}

double harness_seconds(HarnessClock::duration d) {
  return std::chrono::duration<double>(d).count();
}

TEST(PgHarness, PrimaryKeepsACommittedTableAcrossARestartAndStopsForGood) {
  auto pg = PgServer::start_primary();
  ASSERT_TRUE(pg->ok()) << pg->error();
  bool ok = false;
  pg->psql("CREATE TABLE harness_items (id int PRIMARY KEY, name text)", &ok);
  ASSERT_TRUE(ok) << pg->log();
  pg->psql("INSERT INTO harness_items VALUES (1, 'one'), (2, 'two')", &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(pg->psql("SELECT id, name FROM harness_items ORDER BY id"), "1|one\n2|two");
  // A failing statement says so instead of printing nothing.
  pg->psql("SELECT * FROM harness_no_such_table", &ok);
  EXPECT_FALSE(ok);

  const int port = pg->port();
  ASSERT_TRUE(pg->restart()) << pg->error();
  EXPECT_EQ(pg->port(), port);
  EXPECT_EQ(pg->psql("SELECT name FROM harness_items WHERE id = 2"), "two");

  const pid_t postmaster = pg->postmaster_pid();
  ASSERT_GT(postmaster, 0);
  const std::string dsn = pg->dsn();
  pg.reset();
  EXPECT_TRUE(harness_process_gone(postmaster));
  EXPECT_FALSE(harness_psql(dsn, "SELECT 1").ok) << "the server outlived its PgServer";
}

TEST(PgHarness, SynchronousStandbyHasEveryCommitAndTakesWritesOncePromoted) {
  auto primary = PgServer::start_primary();
  ASSERT_TRUE(primary->ok()) << primary->error();
  auto standby = PgServer::start_standby(*primary);
  ASSERT_TRUE(standby->ok()) << standby->error();
  EXPECT_EQ(primary->psql("SELECT sync_state FROM pg_stat_replication"), "sync");
  EXPECT_EQ(standby->psql("SELECT pg_is_in_recovery()"), "t");

  bool ok = false;
  primary->psql("CREATE TABLE harness_ledger (id int PRIMARY KEY, note text)", &ok);
  ASSERT_TRUE(ok) << primary->log();
  primary->psql("INSERT INTO harness_ledger VALUES (1, 'committed on the primary')", &ok);
  ASSERT_TRUE(ok);
  // The sync standby has flushed the commit; applying it follows.
  EXPECT_TRUE(harness_eventually(kHarnessApplyWait, [&] {
    return standby->psql("SELECT note FROM harness_ledger WHERE id = 1") ==
           "committed on the primary";
  })) << standby->log();
  standby->psql("INSERT INTO harness_ledger VALUES (2, 'too early')", &ok);
  EXPECT_FALSE(ok) << "a standby in recovery took a write";
  // As a node set up for either role has it (inert while in recovery): once
  // promoted, its commits would wait for a standby it does not have.
  standby->psql("ALTER SYSTEM SET synchronous_standby_names = '*'", &ok);
  ASSERT_TRUE(ok) << standby->log();
  standby->psql("SELECT pg_reload_conf()", &ok);
  ASSERT_TRUE(ok);

  const pid_t old_postmaster = primary->postmaster_pid();
  primary->kill_hard();
  EXPECT_TRUE(harness_process_gone(old_postmaster));
  EXPECT_FALSE(harness_psql(primary->dsn(), "SELECT 1").ok) << "the killed primary still answers";

  ASSERT_TRUE(standby->promote()) << standby->error();
  EXPECT_EQ(standby->psql("SELECT pg_is_in_recovery()"), "f");
  EXPECT_EQ(standby->psql("SELECT note FROM harness_ledger WHERE id = 1"),
            "committed on the primary");
  // A commit waiting for a standby would hang: a connection that gives up.
  std::unique_ptr<pg::Connection> conn;
  Status st = pg::Connection::open(standby->dsn(), kHarnessStatementTimeoutMs, &conn);
  ASSERT_TRUE(st.ok()) << st.message();
  st = conn->exec("INSERT INTO harness_ledger VALUES (2, 'after the promotion')");
  EXPECT_TRUE(st.ok()) << "promote() left synchronous_standby_names set? " << st.message();
  EXPECT_EQ(standby->psql("SELECT count(*) FROM harness_ledger"), "2");
}

// The positive control of the "sync" above: the primary does tell the two apart.
TEST(PgHarness, AsynchronousReplicationIsNotReportedAsSync) {
  auto primary = PgServer::start_primary();
  ASSERT_TRUE(primary->ok()) << primary->error();
  auto standby = PgServer::start_standby(*primary);
  ASSERT_TRUE(standby->ok()) << standby->error();
  ASSERT_EQ(primary->psql("SELECT sync_state FROM pg_stat_replication"), "sync");

  ASSERT_TRUE(primary->make_replication_asynchronous()) << primary->error();
  EXPECT_EQ(primary->psql("SELECT state, sync_state FROM pg_stat_replication"), "streaming|async");
  bool ok = false;
  primary->psql("CREATE TABLE harness_async (id int)", &ok);
  ASSERT_TRUE(ok);
  primary->psql("INSERT INTO harness_async VALUES (7)", &ok);
  ASSERT_TRUE(ok);
  EXPECT_TRUE(harness_eventually(kHarnessApplyWait, [&] {
    return standby->psql("SELECT id FROM harness_async") == "7";
  })) << standby->log();
}

TEST(PgHarness, ProxyCutResetsAndRefusesThenBlackholesUntilRestored) {
  auto pg = PgServer::start_primary();
  ASSERT_TRUE(pg->ok()) << pg->error();
  TcpProxy proxy(pg->port());
  const std::string via = harness_with_timeout(pg->dsn_via(proxy.port()), kHarnessRefuseTimeoutS);
  const std::string via_blackhole =
      harness_with_timeout(pg->dsn_via(proxy.port()), kHarnessBlackholeTimeoutS);

  HarnessAttempt a = harness_psql(via, "SELECT 40 + 2");
  ASSERT_TRUE(a.ok) << a.error;
  EXPECT_EQ(a.out, "42");
  std::unique_ptr<pg::Connection> open;
  Status st = pg::Connection::open(via, kHarnessStatementTimeoutMs, &open);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_TRUE(open->exec("SELECT 1").ok());

  proxy.cut();
  // The open connection sees a reset, not a timeout.
  const auto before = HarnessClock::now();
  EXPECT_FALSE(open->exec("SELECT 1").ok());
  EXPECT_LT(HarnessClock::now() - before, kHarnessFailFastWithin);
  a = harness_psql(via, "SELECT 1");
  EXPECT_FALSE(a.ok);
  EXPECT_LT(a.took, kHarnessFailFastWithin) << harness_seconds(a.took) << " s: " << a.error;
  // The server itself is untouched.
  EXPECT_EQ(pg->psql("SELECT 1"), "1");

  proxy.restore();
  a = harness_psql(via, "SELECT 'back'");
  EXPECT_TRUE(a.ok) << a.error;
  EXPECT_EQ(a.out, "back");

  proxy.cut(/*blackhole=*/true);
  a = harness_psql(via_blackhole, "SELECT 1");
  EXPECT_FALSE(a.ok);
  EXPECT_GE(a.took, kHarnessBlackholeAtLeast)
      << "refused after " << harness_seconds(a.took) << " s instead of timing out: " << a.error;
  EXPECT_NE(a.error.find("timeout"), std::string::npos) << a.error;

  proxy.restore();
  a = harness_psql(via, "SELECT 'again'");
  EXPECT_TRUE(a.ok) << a.error;
  EXPECT_EQ(a.out, "again");
}

}  // namespace
}  // namespace runledger::testing
