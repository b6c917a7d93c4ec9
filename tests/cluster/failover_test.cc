// docs/cluster.md "Failures that must lose nothing", against real
// PostgreSQL 15 servers and real runledgerd processes on loopback. After
// each fault: the log in the database is gapless, its hash chain holds, no
// row of a deposed epoch follows the next epoch's first row, every
// acknowledged command is there exactly once, and every node's folder
// verifies and ends at the database's head. ChecksFindWhatTheyLookFor is
// their positive control; PrimaryLostWithAsynchronousReplication is the
// one of the promoted-standby test.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "cluster/pg_connection.h"
#include "tests/cluster/cluster_fixture.h"
#include "tests/support/tcp_proxy.h"

namespace runledger::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using SteadyClock = std::chrono::steady_clock;

bool wait_acked(const KeyedLoad& load, size_t at_least, milliseconds wait) {
  const auto deadline = SteadyClock::now() + wait;
  while (SteadyClock::now() < deadline) {
    if (load.acknowledged_count() >= at_least) return true;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return false;
}

std::string joined(const std::vector<std::string>& problems) {
  std::string s;
  for (const auto& p : problems) s += "  " + p + "\n";
  return s;
}

// Every node, stopped, folds to the database's log.
void expect_nodes_agree(Cluster& c, const PgServer& db, const std::set<std::string>& acked) {
  const uint64_t head = head_seq(db);
  for (size_t i = 0; i < c.size(); ++i) {
    ASSERT_TRUE(c.wait_followed(i, head, seconds(60))) << c.node(i).name << " did not follow";
  }
  // A read the store answers (a list) says how far the node has followed too.
  for (size_t i = 0; i < c.size(); ++i) {
    ApiReply list = ApiClient(c.node(i).port).get("/v1/jobs?limit=1");
    const std::string seq = list.header("X-Runledger-Seq");
    ASSERT_FALSE(seq.empty()) << c.node(i).name << ": " << list.status << " " << list.body;
    EXPECT_GE(std::stoull(seq), head) << c.node(i).name;
  }
  // The same job as every node shows it.
  size_t compared = 0;
  for (const auto& id : acked) {
    if (++compared > 20) break;
    std::string first;
    for (size_t i = 0; i < c.size(); ++i) {
      ApiClient api(c.node(i).port);
      ApiReply r = api.get("/v1/jobs/" + id);
      ASSERT_EQ(r.status, 200) << c.node(i).name << " " << id << ": " << r.body;
      EXPECT_FALSE(r.header("X-Runledger-Seq").empty());
      if (i == 0) first = r.body;
      EXPECT_EQ(r.body, first) << c.node(i).name << " shows " << id << " otherwise";
    }
  }
  for (size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(c.node(i).process->terminate(), 0) << c.node(i).process->log();
    auto problems = folder_problems(db, c.node(i).dir->path() + "/data");
    EXPECT_TRUE(problems.empty()) << joined(problems);
  }
}

// The checks of docs/cluster.md after a fault: the log is whole, every
// acknowledged command is there once, and every node folds to the log.
void expect_nothing_lost(Cluster& c, const PgServer& db, const std::set<std::string>& acked) {
  auto problems = log_problems(db);
  EXPECT_TRUE(problems.empty()) << joined(problems);
  problems = lost_or_doubled(db, acked);
  EXPECT_TRUE(problems.empty()) << joined(problems);
  expect_nodes_agree(c, db, acked);
}

class ClusterFailover : public ::testing::Test {
 protected:
  void SetUp() override {
    primary_ = PgServer::start_primary();
    ASSERT_TRUE(primary_->ok()) << primary_->error();
  }
  std::unique_ptr<PgServer> primary_;
};

TEST_F(ClusterFailover, LeaderKilledUnderLoadLosesNothingAndAStandbyLeadsWithinTheLease) {
  auto standby = PgServer::start_standby(*primary_, /*synchronous=*/true);
  ASSERT_TRUE(standby->ok()) << standby->error();
  Cluster c(primary_->dsn(), /*lease_s=*/3);
  c.start(0);
  ASSERT_EQ(c.wait_leader(seconds(30)), 0);
  c.start(1);
  KeyedLoad load({c.node(0).port, c.node(1).port}, 4);
  const int kills = static_cast<int>(env_number("RUNLEDGER_TEST_LEADER_KILLS", 2));
  size_t acked = 0;
  for (int k = 0; k < kills; ++k) {
    ASSERT_TRUE(wait_acked(load, acked + 100, seconds(60)));
    const int leader = c.wait_leader(seconds(30));
    ASSERT_GE(leader, 0);
    const auto killed_at = SteadyClock::now();
    c.node(leader).process->kill_hard();
    const int next = c.wait_leader(seconds(c.lease_s() + 5));
    const double took = std::chrono::duration<double>(SteadyClock::now() - killed_at).count();
    ASSERT_EQ(next, 1 - leader) << "no standby led within the lease + 5 s";
    std::printf("kill %d: node %d leads %.2f s after the leader was killed\n", k + 1, next, took);
    acked = load.acknowledged_count();
    ASSERT_TRUE(wait_acked(load, acked + 100, seconds(60))) << "writes did not resume";
    c.start(leader);  // it comes back as a standby
    acked = load.acknowledged_count();
  }
  load.stop();
  expect_nothing_lost(c, *primary_, load.acknowledged());
}

TEST_F(ClusterFailover, PausedLeaderAppendsNothingAfterItsEpochAndBecomesAStandby) {
  Cluster c(primary_->dsn(), /*lease_s=*/2);
  c.start(0);
  ASSERT_EQ(c.wait_leader(seconds(30)), 0);
  c.start(1);
  KeyedLoad load({c.node(0).port, c.node(1).port}, 4);
  ASSERT_TRUE(wait_acked(load, 100, seconds(60)));
  ASSERT_EQ(::kill(c.node(0).process->pid(), SIGSTOP), 0);
  ASSERT_TRUE(c.wait_leads(1, seconds(c.lease_s() + 5))) << "node 1 did not take over";
  size_t acked = load.acknowledged_count();
  ASSERT_TRUE(wait_acked(load, acked + 100, seconds(60)));
  ASSERT_EQ(::kill(c.node(0).process->pid(), SIGCONT), 0);
  // Resumed, it learns it no longer leads: writes get not_leader.
  ApiClient old(c.node(0).port);
  ApiReply r;
  const auto deadline = SteadyClock::now() + seconds(15);
  do {
    r = old.post("/v1/jobs", {{"id", "after-pause"}, {"kind", "etl"}, {"target", "p"}});
    if (r.status == 503 && r.json.is_object() && r.json.contains("leader") &&
        r.json["leader"].is_string()) {
      break;
    }
    std::this_thread::sleep_for(milliseconds(100));
  } while (SteadyClock::now() < deadline);
  EXPECT_TRUE(IsError(r, 503, "not_leader"));
  EXPECT_EQ(r.json.value("leader", ""), "http://127.0.0.1:" + std::to_string(c.node(1).port));
  ApiReply h = old.get("/v1/health");
  EXPECT_EQ(h.json.value("role", ""), "standby") << h.body;
  acked = load.acknowledged_count();
  ASSERT_TRUE(wait_acked(load, acked + 50, seconds(60)));
  load.stop();
  expect_nothing_lost(c, *primary_, load.acknowledged());
}

// The nodes connect as a role without SUPERUSER, as a production setup
// would: a node may end the sessions of its own role, and no other.
std::string node_role_dsn(const PgServer& db) {
  bool ok = false;
  db.psql("CREATE ROLE rl_node LOGIN; GRANT USAGE, CREATE ON SCHEMA public TO rl_node", &ok);
  EXPECT_TRUE(ok) << "the nodes' role could not be made";
  std::string dsn = db.dsn();
  const std::string user = "user=postgres";
  dsn.replace(dsn.find(user), user.size(), "user=rl_node");
  return dsn;
}

// A session that locks the leader row, as a batch's fence does, and then
// sends nothing more: the writing connection of a leader frozen between a
// batch's fence and its Sync. The server's idle-in-transaction timeout is
// off for it, as it is in effect for a session inside a batch.
std::unique_ptr<pg::Connection> frozen_inside_a_batch(const std::string& dsn) {
  std::unique_ptr<pg::Connection> c;
  Status st = pg::Connection::open(dsn, 30'000, &c);
  EXPECT_TRUE(st.ok()) << st.ToString();
  if (!st.ok()) return nullptr;
  EXPECT_TRUE(c->exec("SET idle_in_transaction_session_timeout = 0").ok());
  st = c->exec("BEGIN; UPDATE runledger_leader SET head_seq = head_seq WHERE id = 1");
  EXPECT_TRUE(st.ok()) << st.ToString();
  return c;
}

// A leader frozen in the middle of a batch holds the leader row's lock for
// as long as it stays frozen. Once the lease has run out, a standby ends
// that session (its batch rolls back, unacknowledged) and takes over.
TEST_F(ClusterFailover, LeaderFrozenInsideABatchIsEndedByTheStandbyThatTakesOver) {
  const std::string dsn = node_role_dsn(*primary_);
  Cluster c(dsn, /*lease_s=*/2);
  c.start(0);
  ASSERT_EQ(c.wait_leader(seconds(30)), 0);
  c.start(1);
  KeyedLoad load({c.node(0).port, c.node(1).port}, 4);
  ASSERT_TRUE(wait_acked(load, 100, seconds(60)));
  auto frozen = frozen_inside_a_batch(dsn);
  ASSERT_NE(frozen, nullptr);
  ASSERT_EQ(::kill(c.node(0).process->pid(), SIGSTOP), 0);
  const auto stopped_at = SteadyClock::now();
  ASSERT_TRUE(c.wait_leads(1, seconds(c.lease_s() + 5)))
      << "node 1 did not take over from a leader frozen inside a batch";
  std::printf("node 1 leads %.2f s after the leader froze inside a batch\n",
              std::chrono::duration<double>(SteadyClock::now() - stopped_at).count());
  EXPECT_FALSE(frozen->exec("SELECT 1").ok()) << "the frozen session was not ended";
  EXPECT_NE(c.node(1).process->log().find("ended database session"), std::string::npos)
      << "the standby did not say which session it ended";
  size_t acked = load.acknowledged_count();
  ASSERT_TRUE(wait_acked(load, acked + 100, seconds(60))) << "writes did not resume";
  ASSERT_EQ(::kill(c.node(0).process->pid(), SIGCONT), 0);
  load.stop();
  expect_nothing_lost(c, *primary_, load.acknowledged());
}

// Positive control: a session the nodes may not end (a superuser's) holds
// the leader row past the lease, and no standby takes over until it ends.
TEST_F(ClusterFailover, ASessionTheNodesMayNotEndKeepsEveryStandbyFromLeading) {
  Cluster c(node_role_dsn(*primary_), /*lease_s=*/2);
  c.start(0);
  ASSERT_EQ(c.wait_leader(seconds(30)), 0);
  ApiClient api(c.node(0).port);
  ASSERT_TRUE(
      IsStatus(api.post("/v1/jobs", {{"id", "before"}, {"kind", "etl"}, {"target", "f"}}), 201));
  c.start(1);
  ASSERT_TRUE(c.wait_followed(1, head_seq(*primary_), seconds(30)));
  auto frozen = frozen_inside_a_batch(primary_->dsn());
  ASSERT_NE(frozen, nullptr);
  ASSERT_EQ(::kill(c.node(0).process->pid(), SIGSTOP), 0);
  EXPECT_FALSE(c.wait_leads(1, seconds(c.lease_s() + 5)))
      << "node 1 took over though the leader row stayed locked";
  EXPECT_TRUE(frozen->exec("SELECT 1").ok()) << "the superuser's session was ended";
  frozen.reset();  // its transaction ends with it
  EXPECT_TRUE(c.wait_leads(1, seconds(c.lease_s() + 10))) << "node 1 never took over";
  ASSERT_EQ(::kill(c.node(0).process->pid(), SIGCONT), 0);
}

TEST_F(ClusterFailover, DatabaseUnreachableWritesGet503InTimeReadsGoOnWritesResume) {
  TcpProxy proxy(primary_->port());
  Cluster c(primary_->dsn_via(proxy.port()), /*lease_s=*/4);
  c.start(0);
  ASSERT_EQ(c.wait_leader(seconds(30)), 0);
  ApiClient api(c.node(0).port);
  ASSERT_TRUE(
      IsStatus(api.post("/v1/jobs", {{"id", "before"}, {"kind", "etl"}, {"target", "d"}}), 201));
  const auto outage = seconds(env_number("RUNLEDGER_TEST_DB_OUTAGE_S", 12));
  proxy.cut();
  const auto cut_at = SteadyClock::now();
  int writes = 0;
  bool said_not_following = false;
  while (SteadyClock::now() - cut_at < outage) {
    const auto sent = SteadyClock::now();
    ApiReply w =
        api.post("/v1/jobs",
                 {{"id", "during-" + std::to_string(writes++)}, {"kind", "etl"}, {"target", "d"}});
    const double took = std::chrono::duration<double>(SteadyClock::now() - sent).count();
    EXPECT_EQ(w.status, 503) << w.body;
    EXPECT_LE(took, 10.0) << "a write waited " << took << " s for its answer";
    ApiReply read = api.get("/v1/jobs/before");
    EXPECT_EQ(read.status, 200) << read.body;
    EXPECT_FALSE(read.header("X-Runledger-Seq").empty());
    // Once its lease is gone the node is a standby that cannot follow:
    // its health says so, for a load balancer to take it out.
    ApiReply health = api.get("/v1/health");
    if (health.status == 503 &&
        health.body.find("this standby does not follow the log") != std::string::npos) {
      said_not_following = true;
    }
  }
  EXPECT_TRUE(said_not_following) << "/v1/health never said the node does not follow the log";
  EXPECT_EQ(api.get("/v1/health/leader").status, 503);
  proxy.restore();
  const auto restored_at = SteadyClock::now();
  ApiReply w;
  while (SteadyClock::now() - restored_at < seconds(15)) {
    w = api.post("/v1/jobs", {{"id", "after"}, {"kind", "etl"}, {"target", "d"}});
    if (w.status == 201) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(w.status, 201) << "writes did not resume within 15 s: " << w.body;
  EXPECT_EQ(api.get("/v1/health").status, 200);
  std::printf("writes resumed %.2f s after the database came back\n",
              std::chrono::duration<double>(SteadyClock::now() - restored_at).count());
  expect_nothing_lost(c, *primary_, {"before", "after"});
}

// Both PostgreSQL servers in the DSN: libpq connects to the one that takes
// writes, which after the promotion is the former standby.
std::string both_servers(const PgServer& a, const PgServer& b) {
  return "host=127.0.0.1,127.0.0.1 port=" + std::to_string(a.port()) + "," +
         std::to_string(b.port()) +
         " dbname=runledger user=postgres connect_timeout=2 target_session_attrs=read-write";
}

TEST_F(ClusterFailover, PrimaryKilledAndSynchronousStandbyPromotedLosesNoAcknowledgedCommand) {
  auto standby = PgServer::start_standby(*primary_, /*synchronous=*/true);
  ASSERT_TRUE(standby->ok()) << standby->error();
  Cluster c(both_servers(*primary_, *standby), /*lease_s=*/3);
  c.start(0);
  ASSERT_EQ(c.wait_leader(seconds(30)), 0);
  c.start(1);
  KeyedLoad load({c.node(0).port, c.node(1).port}, 4);
  ASSERT_TRUE(wait_acked(load, 200, seconds(60)));
  primary_->kill_hard();
  ASSERT_TRUE(standby->promote()) << standby->error();
  size_t acked = load.acknowledged_count();
  ASSERT_TRUE(wait_acked(load, acked + 100, seconds(60))) << "writes did not resume";
  load.stop();
  expect_nothing_lost(c, *standby, load.acknowledged());
}

// The positive control of the test above: with asynchronous replication
// and a standby that fell behind, the promoted standby lacks commands that
// were acknowledged, and the check says so.
TEST_F(ClusterFailover, PrimaryLostWithAsynchronousReplicationIsCaughtByTheCheck) {
  auto standby = PgServer::start_standby(*primary_, /*synchronous=*/false);
  ASSERT_TRUE(standby->ok()) << standby->error();
  Cluster c(both_servers(*primary_, *standby), /*lease_s=*/3);
  c.start(0);
  ASSERT_EQ(c.wait_leader(seconds(30)), 0);
  KeyedLoad load({c.node(0).port}, 2);
  ASSERT_TRUE(wait_acked(load, 50, seconds(60)));
  standby->kill_hard();  // it stops receiving; the primary goes on acknowledging
  size_t acked = load.acknowledged_count();
  ASSERT_TRUE(wait_acked(load, acked + 50, seconds(60)));
  load.stop();
  primary_->kill_hard();
  ASSERT_TRUE(standby->restart()) << standby->error();
  ASSERT_TRUE(standby->promote()) << standby->error();
  auto problems = lost_or_doubled(*standby, load.acknowledged());
  EXPECT_FALSE(problems.empty()) << "the check missed acknowledged commands lost with the primary";
}

TEST_F(ClusterFailover, ChecksFindWhatTheyLookFor) {
  Cluster c(primary_->dsn(), /*lease_s=*/2);
  c.start(0);
  ASSERT_EQ(c.wait_leader(seconds(30)), 0);
  ApiClient api(c.node(0).port);
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(IsStatus(
        api.post("/v1/jobs", {{"id", "c" + std::to_string(i)}, {"kind", "etl"}, {"target", "c"}}),
        201));
  }
  EXPECT_EQ(c.node(0).process->terminate(), 0);
  ASSERT_TRUE(log_problems(*primary_).empty());
  ASSERT_TRUE(lost_or_doubled(*primary_, {"c0", "c5"}).empty());
  EXPECT_TRUE(folder_problems(*primary_, c.node(0).dir->path() + "/data").empty());
  // An acknowledged command missing.
  EXPECT_FALSE(lost_or_doubled(*primary_, {"c0", "never-written"}).empty());
  // A row of a deposed epoch after the next epoch's first one.
  primary_->psql("UPDATE runledger_log SET epoch = epoch + 1 WHERE seq = 3");
  EXPECT_FALSE(log_problems(*primary_).empty());
  primary_->psql("UPDATE runledger_log SET epoch = epoch - 1 WHERE seq = 3");
  ASSERT_TRUE(log_problems(*primary_).empty());
  // Bytes that do not hash to their hash, and a chain that breaks.
  primary_->psql("UPDATE runledger_log SET hash = sha256('x') WHERE seq = 4");
  EXPECT_FALSE(log_problems(*primary_).empty());
  // A gap; the folder now holds more than the database.
  primary_->psql("DELETE FROM runledger_log WHERE seq >= 4");
  primary_->psql(
      "INSERT INTO runledger_log SELECT 7, 'job/x', 1, type, recorded_at, actor, "
      "command_id, epoch, data, bytes, hash, prev_hash FROM runledger_log WHERE seq = 3");
  EXPECT_FALSE(log_problems(*primary_).empty());
  EXPECT_FALSE(folder_problems(*primary_, c.node(0).dir->path() + "/data").empty());
}

}  // namespace
}  // namespace runledger::testing

namespace runledger::testing {
namespace {

// A node with an empty folder rebuilds its state from the database, joins
// as a standby, and then follows the leader closely. The catch-up rate is
// printed; `runledger bench` measures it at millions of events.
TEST_F(ClusterFailover, NodeWithAnEmptyFolderCatchesUpFromTheDatabaseAndFollows) {
  Cluster c(primary_->dsn(), /*lease_s=*/3);
  c.start(0);
  ASSERT_EQ(c.wait_leader(seconds(30)), 0);
  const size_t jobs = env_number("RUNLEDGER_TEST_BEHIND_EVENTS", 10000);
  {
    KeyedLoad load({c.node(0).port}, 8);
    ASSERT_TRUE(wait_acked(load, jobs, seconds(600)));
    load.stop();
  }
  const uint64_t head = head_seq(*primary_);
  const auto started = SteadyClock::now();
  c.start(1);
  ASSERT_TRUE(c.wait_followed(1, head, seconds(300)));
  const double took = std::chrono::duration<double>(SteadyClock::now() - started).count();
  std::printf("an empty node folded %llu events from the database in %.2f s (start included)\n",
              static_cast<unsigned long long>(head), took);
  ApiClient leader(c.node(0).port);
  ApiClient standby(c.node(1).port);
  ApiReply h = standby.get("/v1/health");
  EXPECT_EQ(h.json.value("role", ""), "standby") << h.body;
  std::vector<double> lags;
  for (int i = 0; i < 10; ++i) {
    const std::string id = "followed-" + std::to_string(i);
    ASSERT_TRUE(
        IsStatus(leader.post("/v1/jobs", {{"id", id}, {"kind", "etl"}, {"target", "f"}}), 201));
    const auto written = SteadyClock::now();
    ApiReply r;
    do {
      r = standby.get("/v1/jobs/" + id);
    } while (r.status != 200 && SteadyClock::now() - written < seconds(10));
    ASSERT_EQ(r.status, 200) << "the standby did not follow within 10 s";
    lags.push_back(std::chrono::duration<double, std::milli>(SteadyClock::now() - written).count());
  }
  std::sort(lags.begin(), lags.end());
  std::printf("a standby showed a new job after %.1f ms (median of 10), %.1f ms at most\n",
              lags[lags.size() / 2], lags.back());
  EXPECT_LT(lags[lags.size() / 2], 1000.0);
  auto problems = log_problems(*primary_);
  EXPECT_TRUE(problems.empty()) << joined(problems);
  expect_nodes_agree(c, *primary_, {"followed-0", "followed-9"});
}

}  // namespace
}  // namespace runledger::testing

namespace runledger::testing {
namespace {

// The client library every tool uses (runledger work, the CLI's verbs)
// sends a write that a standby refuses to the leader it names.
// PostgreSQL's jsonb cannot hold U+0000, which a request's string may carry:
// the leader writes such an event all the same (the data column shows U+2400
// there, the event keeps its bytes) and keeps its leadership.
TEST_F(ClusterFailover, ANulCharacterInARequestIsWrittenAndTheLeaderStays) {
  Cluster c(primary_->dsn(), /*lease_s=*/3);
  c.start(0);
  ASSERT_EQ(c.wait_leader(seconds(30)), 0);
  ApiClient api(c.node(0).port);
  const std::string epoch = primary_->psql("SELECT epoch FROM runledger_leader");
  const std::string reason("before\0after", 12);
  ApiReply placed =
      api.post("/v1/holds", {{"target", "nul"}, {"kind", "RESULT_UNKNOWN"}, {"reason", reason}});
  ASSERT_TRUE(IsStatus(placed, 201)) << placed.body;
  ApiReply hold = api.get("/v1/holds/" + placed.json.value("id", ""));
  ASSERT_TRUE(IsStatus(hold, 200)) << hold.body;
  EXPECT_EQ(hold.json.value("reason", ""), reason);
  EXPECT_EQ(primary_->psql("SELECT data->>'reason' FROM runledger_events WHERE stream LIKE "
                           "'hold/%'"),
            "before\u2400after");
  EXPECT_EQ(primary_->psql("SELECT epoch FROM runledger_leader"), epoch)
      << "the leader lost its leadership over the write";
  expect_nothing_lost(c, *primary_, {});
}

TEST_F(ClusterFailover, TheCliSentToAStandbyFollowsNotLeaderToTheLeader) {
  Cluster c(primary_->dsn(), /*lease_s=*/3);
  c.start(0);
  ASSERT_EQ(c.wait_leader(seconds(30)), 0);
  c.start(1);
  ApiClient standby(c.node(1).port);
  ApiReply refused = standby.post("/v1/jobs", {{"id", "direct"}, {"kind", "etl"}, {"target", "x"}});
  // The standby may not know the leader for a poll or two after its start.
  const auto deadline = SteadyClock::now() + seconds(10);
  while (!(refused.json.is_object() && refused.json["leader"].is_string()) &&
         SteadyClock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(100));
    refused = standby.post("/v1/jobs", {{"id", "direct"}, {"kind", "etl"}, {"target", "x"}});
  }
  ASSERT_TRUE(IsError(refused, 503, "not_leader"));
  const std::string standby_url = "http://127.0.0.1:" + std::to_string(c.node(1).port);
  CliResult r = run_cli({"job", "enqueue", "--server", standby_url, "--output", "json", "--id",
                         "via-standby", "--kind", "etl", "--target", "x"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  ApiClient leader(c.node(0).port);
  EXPECT_EQ(leader.get("/v1/jobs/via-standby").status, 200);
  EXPECT_EQ(leader.get("/v1/jobs/direct").status, 404);  // refused, so never written
}

}  // namespace
}  // namespace runledger::testing

namespace runledger::testing {
namespace {

// `runledger bench w1 --pg-dsn` at a CI size: it checks its own result
// (every command acknowledged, every job SUCCEEDED, the folder's log whole),
// and refuses a database that already holds a log.
TEST_F(ClusterFailover, BenchW1OnPostgresChecksItsOwnResult) {
  CliResult r = run_cli(
      {"bench", "w1", "--pg-dsn", primary_->dsn(), "--jobs", "40", "--callers", "8", "--json"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j.value("ok", false), true) << r.out;
  EXPECT_EQ(head_seq(*primary_), 40u * 12u);  // W1: 12 events a job
  auto problems = log_problems(*primary_);
  EXPECT_TRUE(problems.empty()) << joined(problems);
  CliResult again = run_cli({"bench", "w1", "--pg-dsn", primary_->dsn(), "--jobs", "4", "--json"});
  EXPECT_NE(again.code, 0);
  EXPECT_NE((again.out + again.err).find("already holds a log"), std::string::npos)
      << again.out << again.err;
}

}  // namespace
}  // namespace runledger::testing

namespace runledger::testing {
namespace {

// `runledger bench follow` at a CI size: a fresh node folds the whole log
// it copied into the database, ending with the generated log's hash.
TEST_F(ClusterFailover, BenchFollowChecksItsOwnResult) {
  CliResult r = run_cli({"bench", "follow", "--pg-dsn", primary_->dsn(), "--events", "2000",
                         "--callers", "8", "--json"});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << r.out;
  EXPECT_EQ(j.value("ok", false), true) << r.out;
  EXPECT_GE(head_seq(*primary_), 2000u);
  auto problems = log_problems(*primary_);
  EXPECT_TRUE(problems.empty()) << joined(problems);
}

}  // namespace
}  // namespace runledger::testing
