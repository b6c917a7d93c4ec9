// runledger's reading tools on a cluster's PostgreSQL log (--pg-dsn): a log
// written by a real leader answers replay, verify, timeline, events and
// export exactly as the leader's own data folder of the same log does;
// verify fails on a damaged row and names it; the read-only store pages
// through the log as the RocksDB store reads it; and the choice of the log
// is a usage error unless exactly one of --data and --pg-dsn is given.
#include <httplib.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "cluster/pg_connection.h"
#include "cluster/pg_log_store.h"
#include "events/event_codec.h"
#include "events/event_json.h"
#include "events/event_store.h"
#include "tests/support/pg_server.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
// Named, not anonymous: tests/cluster is compiled in batches.
namespace pg_tools {

using nlohmann::json;

constexpr int kExitFindings = 1;
constexpr int kExitUsage = 64;
constexpr int kExitNoInput = 66;
constexpr int kExitSoftware = 70;
constexpr auto kLeaderWait = std::chrono::seconds(60);

// A log written by a real leader on PostgreSQL, then the leader stopped:
// its data folder holds its copy of the same log.
class PgToolsLog {
 public:
  // Empty when the log was written; else what went wrong.
  std::string build();
  PgServer& pg() { return *pg_; }
  const std::string& folder() const { return folder_.path(); }
  uint64_t events() const { return events_; }
  const std::string& hold_id() const { return hold_id_; }
  // What `verify --pg-dsn` printed while the leader was running.
  const CliResult& verify_while_leading() const { return verify_while_leading_; }

 private:
  std::string write(httplib::Client& http);
  std::unique_ptr<PgServer> pg_;
  TempDir folder_;
  uint64_t events_ = 0;
  std::string hold_id_;
  CliResult verify_while_leading_;
};

// The reply's JSON, or an error naming the call when the status is not `want`.
std::string pg_tools_call(httplib::Client& http, const std::string& path, const json& body,
                          int want, json* reply = nullptr) {
  auto res = http.Post(path, body.dump(), "application/json");
  if (!res) return "POST " + path + ": no reply";
  if (res->status != want) {
    return "POST " + path + ": " + std::to_string(res->status) + " " + res->body;
  }
  if (reply != nullptr) *reply = res->body.empty() ? json() : json::parse(res->body);
  return "";
}

std::string PgToolsLog::write(httplib::Client& http) {
  std::string error;
  // Each call until the first that fails, whose error is the answer.
  auto post = [&](const std::string& path, const json& body, int want, json* reply = nullptr) {
    if (error.empty()) error = pg_tools_call(http, path, body, want, reply);
    return error.empty();
  };
  // seq 1-3: three jobs, the third on a target of its own (the tests alter
  // seq 3's bytes in place)
  const json plan = json::array({"LOAD"});
  post("/v1/jobs", {{"id", "j1"}, {"kind", "build"}, {"target", "t-alpha"}, {"plan", plan}}, 201);
  post("/v1/jobs", {{"id", "j2"}, {"kind", "build"}, {"target", "t-alpha"}, {"plan", plan}}, 201);
  post("/v1/jobs", {{"id", "j3"}, {"kind", "other"}, {"target", "t-gamma"}, {"plan", plan}}, 201);
  // j1 runs to the end; j2 waits for its target meanwhile, then is cancelled
  json claimed;
  if (!post("/v1/jobs/claim", {{"worker", "w1"}, {"kinds", {"build"}}}, 200, &claimed)) {
    return error;
  }
  if (claimed.at("job").at("id") != "j1") return "the claim got " + claimed.dump();
  const std::string token = claimed.at("lease_token").get<std::string>();
  for (const char* path :
       {"/v1/jobs/j1/start", "/v1/jobs/j1/steps/LOAD/start", "/v1/jobs/j1/steps/LOAD/done"}) {
    post(path, {{"lease_token", token}}, 200);
  }
  post("/v1/jobs/j2/cancel", {{"reason", "not needed"}}, 202);
  // a connector synced once, and a hold placed and released
  post("/v1/connectors", {{"id", "c1"}, {"name", "Shop"}}, 201);
  json sync;
  if (!post("/v1/connectors/c1/sync", json::object(), 202, &sync)) return error;
  post("/v1/connectors/c1/syncs/" + sync.at("sync_id").get<std::string>() + "/succeeded",
       json::object(), 200);
  json hold;
  if (!post("/v1/holds", {{"target", "t-beta"}, {"kind", "RESULT_UNKNOWN"}, {"reason", "checking"}},
            201, &hold)) {
    return error;
  }
  hold_id_ = hold.at("id").get<std::string>();
  post("/v1/holds/" + hold_id_ + "/release", {{"note", "checked"}}, 200);
  return error;
}

std::string PgToolsLog::build() {
  pg_ = PgServer::start_primary();
  if (!pg_->ok()) return "PostgreSQL did not start: " + pg_->error();
  ServerProcess server(folder_.path(),
                       {"--store", "postgres", "--pg-dsn", pg_->dsn(), "--node-name", "n1"});
  if (!server.wait_ready()) return "runledgerd did not start: " + server.log();
  httplib::Client http("127.0.0.1", server.port());
  http.set_read_timeout(30, 0);
  const auto deadline = std::chrono::steady_clock::now() + kLeaderWait;
  for (;;) {
    auto res = http.Get("/v1/health");
    if (res && res->status == 200 && json::parse(res->body).value("role", "") == "leader") break;
    if (std::chrono::steady_clock::now() > deadline) {
      return "the node did not lead: " + (res ? res->body : "no reply") + "\n" + server.log();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (std::string e = write(http); !e.empty()) return e + "\n" + server.log();
  auto health = http.Get("/v1/health");
  if (!health) return "no health reply";
  events_ = json::parse(health->body).at("last_seq").get<uint64_t>();
  // The tools read the database beside a running leader.
  verify_while_leading_ = run_cli({"verify", "--pg-dsn", pg_->dsn()});
  if (int code = server.terminate(); code != 0) {
    return "runledgerd exited " + std::to_string(code) + ": " + server.log();
  }
  return "";
}

class PgTools : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    log_ = new PgToolsLog();
    error_ = new std::string(log_->build());
  }
  static void TearDownTestSuite() {
    delete log_;
    delete error_;
    log_ = nullptr;
    error_ = nullptr;
  }
  void SetUp() override {
    if (!error_->empty()) FAIL() << *error_;
  }

  static std::string dsn() { return log_->pg().dsn(); }
  // psql's output without the newline that ends it.
  static std::string psql(const std::string& sql) {
    bool ok = false;
    std::string out = log_->pg().psql(sql, &ok);
    EXPECT_TRUE(ok) << sql << ": " << out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }
  // `args` run once on the database and once on the leader's folder.
  static std::pair<CliResult, CliResult> both(std::vector<std::string> args) {
    std::vector<std::string> on_pg = args, on_folder = args;
    on_pg.insert(on_pg.end(), {"--pg-dsn", dsn()});
    on_folder.insert(on_folder.end(), {"--data", log_->folder()});
    return {run_cli(on_pg), run_cli(on_folder)};
  }

  static PgToolsLog* log_;
  static std::string* error_;
};

PgToolsLog* PgTools::log_ = nullptr;
std::string* PgTools::error_ = nullptr;

// Puts seq's row back as it was when the guard was made, whatever a test did
// to it.
class PgToolsRowGuard {
 public:
  PgToolsRowGuard(PgServer& pg, uint64_t seq) : pg_(pg), seq_(std::to_string(seq)) {
    bool ok = false;
    pg_.psql(
        "DROP TABLE IF EXISTS pg_tools_saved; CREATE TABLE pg_tools_saved AS SELECT * FROM "
        "runledger_log WHERE seq = " +
            seq_,
        &ok);
    EXPECT_TRUE(ok);
  }
  ~PgToolsRowGuard() {
    bool ok = false;
    std::string out =
        pg_.psql("BEGIN; DELETE FROM runledger_log WHERE seq = " + seq_ +
                     "; INSERT INTO runledger_log SELECT * FROM pg_tools_saved; DROP TABLE "
                     "pg_tools_saved; COMMIT;",
                 &ok);
    EXPECT_TRUE(ok) << out;
  }

 private:
  PgServer& pg_;
  const std::string seq_;
};

// The SQL view users read (docs/cluster.md "The SQL view") shows each
// event's own fields: what its bytes say, column by column.
TEST_F(PgTools, TheSqlViewShowsWhatEachEventsBytesSay) {
  std::unique_ptr<pg::Connection> c;
  ASSERT_TRUE(pg::Connection::open(dsn(), 10'000, &c).ok());
  pg::Result r;
  Status st = c->query(
      "SELECT l.bytes, v.stream, v.version, v.type, "
      "(extract(epoch FROM v.recorded_at) * 1000)::int8, v.actor, v.command_id, v.data::text, "
      "v.hash, v.prev_hash FROM runledger_events v JOIN runledger_log l USING (seq) ORDER BY seq",
      {}, &r);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(static_cast<uint64_t>(r.rows()), log_->events());
  std::map<std::string, int> types;
  for (int i = 0; i < r.rows(); ++i) {
    const std::string bytes(r.bytes(i, 0));
    const fb::Event* e = nullptr;
    ASSERT_TRUE(decode_event(bytes, &e).ok()) << "row " << i;
    SCOPED_TRACE("seq " + std::to_string(e->seq()));
    EXPECT_EQ(r.bytes(i, 1), e->stream()->string_view());
    EXPECT_EQ(static_cast<uint32_t>(r.int32(i, 2)), e->stream_version());
    EXPECT_EQ(r.bytes(i, 3), event_type_name(e->payload_type()));
    EXPECT_EQ(r.int64(i, 4), e->recorded_at_ms());
    EXPECT_EQ(r.bytes(i, 5), e->actor()->string_view());
    EXPECT_EQ(r.bytes(i, 6), e->command_id()->string_view());
    EXPECT_EQ(json::parse(r.bytes(i, 7)), event_data_json(*e));
    EXPECT_EQ(r.bytes(i, 8), sha256_hex(bytes));
    EXPECT_EQ(r.bytes(i, 9), to_hex(e->prev_hash()->data(), e->prev_hash()->size()));
    ++types[std::string(event_type_name(e->payload_type()))];
  }
  // Jobs, steps, a connector's sync and a hold: more than a few kinds.
  EXPECT_GE(types.size(), 10u);
}

TEST_F(PgTools, VerifyOfTheDatabaseIsCleanAndCountsEveryEvent) {
  const std::string ok = "ok: " + std::to_string(log_->events()) + " events, ";
  EXPECT_EQ(log_->verify_while_leading().code, 0) << log_->verify_while_leading().err;
  EXPECT_EQ(log_->verify_while_leading().out.rfind(ok, 0), 0u) << log_->verify_while_leading().out;
  auto [pg, folder] = both({"verify"});
  ASSERT_EQ(pg.code, 0) << pg.out << pg.err;
  EXPECT_EQ(pg.out.rfind(ok, 0), 0u) << pg.out;
  // the same streams, last seq and last hash as the leader's copy
  ASSERT_EQ(folder.code, 0) << folder.out << folder.err;
  EXPECT_EQ(pg.out, folder.out);
  EXPECT_TRUE(pg.err.empty()) << pg.err;
}

TEST_F(PgTools, EventsAreTheSameAsTheLeadersFolder) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"events"},
                                             {"events", "--stream", "job/j1"},
                                             {"events", "--stream", "connector/c1"},
                                             {"events", "--from-seq", "2", "--to-seq", "5"},
                                             {"events", "--type", "JobEnqueued"}}) {
    auto [pg, folder] = both(args);
    ASSERT_EQ(pg.code, 0) << args.back() << ": " << pg.err;
    ASSERT_EQ(folder.code, 0) << args.back() << ": " << folder.err;
    EXPECT_FALSE(pg.out.empty()) << args.back();
    EXPECT_EQ(pg.out, folder.out) << args.back();
  }
  CliResult all = run_cli({"events", "--pg-dsn", dsn()});
  size_t lines = 0;
  for (char c : all.out) lines += c == '\n';
  EXPECT_EQ(lines, log_->events());
}

TEST_F(PgTools, TimelineReplayAndExportAreTheSameAsTheLeadersFolder) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"timeline", "job/j1"},
                                             {"timeline", "j2"},
                                             {"timeline", "connector/c1"},
                                             {"timeline", "hold/" + log_->hold_id()},
                                             {"replay"},
                                             {"replay", "--until-seq", "4"},
                                             {"replay", "--entity", "job/j1", "--pretty"},
                                             {"export", "--out", "-"}}) {
    auto [pg, folder] = both(args);
    const std::string what = args.front() + " " + args.back();
    ASSERT_EQ(pg.code, 0) << what << ": " << pg.err;
    ASSERT_EQ(folder.code, 0) << what << ": " << folder.err;
    EXPECT_FALSE(pg.out.empty()) << what;
    EXPECT_EQ(pg.out, folder.out) << what;
  }
}

TEST_F(PgTools, TheDsnMayComeFromTheEnvironment) {
  CliResult pg = run_cli({"events"}, {"RUNLEDGER_PG_DSN=" + dsn()});
  CliResult folder = run_cli({"events", "--data", log_->folder()});
  ASSERT_EQ(pg.code, 0) << pg.err;
  EXPECT_EQ(pg.out, folder.out);
}

TEST_F(PgTools, AnUnreadableRowFailsVerifyNamingItsSeq) {
  PgToolsRowGuard guard(log_->pg(), 3);
  psql("UPDATE runledger_log SET bytes = substring(bytes from 1 for 12) WHERE seq = 3");
  CliResult r = run_cli({"verify", "--pg-dsn", dsn()});
  EXPECT_EQ(r.code, kExitFindings) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("first bad seq 3: ", 0), 0u) << r.out << r.err;
  // and the other tools refuse it rather than print past it
  CliResult events = run_cli({"events", "--pg-dsn", dsn()});
  EXPECT_EQ(events.code, kExitFindings) << events.err;
  EXPECT_NE(events.err.find("corruption at seq 3"), std::string::npos) << events.err;
  CliResult exported = run_cli({"export", "--pg-dsn", dsn(), "--out", "-"});
  EXPECT_EQ(exported.code, kExitFindings) << exported.err;
}

TEST_F(PgTools, AnotherValidEventInARowFailsVerifyNamingItsSeq) {
  PgToolsRowGuard guard(log_->pg(), 3);
  psql(
      "UPDATE runledger_log SET bytes = (SELECT bytes FROM runledger_log WHERE seq = 4) "
      "WHERE seq = 3");
  CliResult r = run_cli({"verify", "--pg-dsn", dsn()});
  EXPECT_EQ(r.code, kExitFindings) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("first bad seq 3: ", 0), 0u) << r.out << r.err;
}

TEST_F(PgTools, AnAlteredEventBreaksTheHashChainAndFailsVerify) {
  // seq 3 is j3's JobEnqueued; its target, changed in place, still decodes
  // as the event of seq 3: only the hash chain tells
  ASSERT_EQ(psql("SELECT type, stream FROM runledger_log WHERE seq = 3"), "JobEnqueued|job/j3");
  PgToolsRowGuard guard(log_->pg(), 3);
  psql(
      "UPDATE runledger_log SET bytes = overlay(bytes placing convert_to('t-gammb', 'UTF8') "
      "from position(convert_to('t-gamma', 'UTF8') in bytes) for 7) WHERE seq = 3");
  ASSERT_EQ(psql("SELECT position(convert_to('t-gammb', 'UTF8') in bytes) > 0 FROM runledger_log "
                 "WHERE seq = 3"),
            "t");
  CliResult r = run_cli({"verify", "--pg-dsn", dsn()});
  EXPECT_EQ(r.code, kExitFindings) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("first bad seq 3: ", 0), 0u) << r.out << r.err;
  EXPECT_NE(r.out.find("prev_hash"), std::string::npos) << r.out;
}

TEST_F(PgTools, AMissingRowFailsVerifyNamingItsSeq) {
  PgToolsRowGuard guard(log_->pg(), 5);
  psql("DELETE FROM runledger_log WHERE seq = 5");
  CliResult r = run_cli({"verify", "--pg-dsn", dsn()});
  EXPECT_EQ(r.code, kExitFindings) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("first bad seq 5: ", 0), 0u) << r.out << r.err;
}

TEST_F(PgTools, ARowWhoseColumnsDisagreeWithItsEventFailsVerify) {
  // j1's second event, moved to a version its stream does not have: the
  // columns a follower folds by no longer match the bytes
  const std::string seq = psql(
      "SELECT seq FROM runledger_log WHERE stream = 'job/j1' AND "
      "version = 2");
  ASSERT_FALSE(seq.empty());
  PgToolsRowGuard guard(log_->pg(), std::stoull(seq));
  psql("UPDATE runledger_log SET version = 100 WHERE seq = " + seq);
  CliResult r = run_cli({"verify", "--pg-dsn", dsn()});
  EXPECT_EQ(r.code, kExitFindings) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("first bad seq ", 0), 0u) << r.out << r.err;
}

// The store itself, a page of 3 rows at a time: every read answers what the
// RocksDB store of the leader's folder answers.
TEST_F(PgTools, TheStoreReadsPageByPageAsTheFolderDoes) {
  std::unique_ptr<PgLogStore> pg;
  ASSERT_TRUE(PgLogStore::open(dsn(), 3, &pg).ok());
  std::unique_ptr<EventStore> folder;
  StoreOptions options;
  options.read_only = true;
  options.create_if_missing = false;
  ASSERT_TRUE(open_rocksdb_store(log_->folder(), options, &folder).ok());
  ASSERT_EQ(pg->last_seq(), folder->last_seq());
  ASSERT_EQ(pg->last_seq(), log_->events());
  EXPECT_EQ(pg->last_hash(), folder->last_hash());

  auto range = [](const EventStore& s, uint64_t after, uint64_t until) {
    std::vector<std::string> out;
    EXPECT_TRUE(s.read_range(after, until, [&](const fb::Event&, std::string_view bytes) {
                   out.emplace_back(bytes);
                   return true;
                 }).ok());
    return out;
  };
  EXPECT_EQ(range(*pg, 0, 0), range(*folder, 0, 0));
  EXPECT_EQ(range(*pg, 0, 0).size(), log_->events());
  EXPECT_EQ(range(*pg, 2, 7), range(*folder, 2, 7));
  EXPECT_EQ(range(*pg, 3, 6).size(), 3u);

  auto stream = [](const EventStore& s, const std::string& name, uint64_t until) {
    std::vector<std::string> out;
    EXPECT_TRUE(s.read_stream(name, until, [&](const fb::Event&, std::string_view bytes) {
                   out.emplace_back(bytes);
                   return true;
                 }).ok());
    return out;
  };
  auto from = [](const EventStore& s, const std::string& name, uint32_t version, uint64_t seq) {
    std::vector<std::string> out;
    EXPECT_TRUE(
        s.read_stream_from(name, version, seq, [&](const fb::Event&, std::string_view bytes) {
           out.emplace_back(bytes);
           return true;
         }).ok());
    return out;
  };
  for (const std::string name : {"job/j1", "job/j2", "connector/c1", "job/none"}) {
    EXPECT_EQ(stream(*pg, name, 0), stream(*folder, name, 0)) << name;
    EXPECT_EQ(stream(*pg, name, 5), stream(*folder, name, 5)) << name;
    EXPECT_EQ(from(*pg, name, 2, 0), from(*folder, name, 2, 0)) << name;
    EXPECT_EQ(from(*pg, name, 0, 6), from(*folder, name, 0, 6)) << name;
    uint32_t pg_version = 0, folder_version = 0;
    ASSERT_TRUE(pg->stream_version(name, &pg_version).ok());
    ASSERT_TRUE(folder->stream_version(name, &folder_version).ok());
    EXPECT_EQ(pg_version, folder_version) << name;
  }
  EXPECT_GT(stream(*pg, "job/j1", 0).size(), 3u) << "more than a page";

  std::string pg_bytes, folder_bytes;
  ASSERT_TRUE(pg->read_event(4, &pg_bytes).ok());
  ASSERT_TRUE(folder->read_event(4, &folder_bytes).ok());
  EXPECT_EQ(pg_bytes, folder_bytes);
  EXPECT_EQ(pg->read_event(log_->events() + 1, &pg_bytes).code(), Status::Code::kNotFound);

  // The stream index: each stream's entries together, by version (streams
  // may come in another order: the database's collation orders them).
  auto index = [](const EventStore& s) {
    std::map<std::string, std::vector<std::pair<uint32_t, uint64_t>>> out;
    std::string previous;
    EXPECT_TRUE(s.scan_stream_index([&](const StreamIndexEntry& e) {
                   EXPECT_TRUE(e.well_formed);
                   auto& entries = out[std::string(e.stream)];
                   EXPECT_TRUE(entries.empty() || e.stream == previous) << e.stream;
                   entries.emplace_back(e.version, e.seq);
                   previous = e.stream;
                   return true;
                 }).ok());
    return out;
  };
  EXPECT_EQ(index(*pg), index(*folder));

  // Read-only: nothing is written through it.
  AppendBatch batch;
  batch.snapshot = "x";
  EXPECT_EQ(pg->append(batch).code(), Status::Code::kUnavailable);
  EXPECT_EQ(pg->put_snapshot("x").code(), Status::Code::kUnavailable);
  std::string snapshot;
  EXPECT_EQ(pg->get_snapshot(&snapshot).code(), Status::Code::kNotFound);
}

TEST_F(PgTools, ExactlyOneOfDataAndPgDsn) {
  TempDir dir;
  for (const char* verb : {"replay", "verify", "timeline", "events", "export"}) {
    std::vector<std::string> args = {verb};
    if (std::string(verb) == "timeline") args.push_back("job/j1");
    if (std::string(verb) == "export") args.insert(args.end(), {"--out", "-"});
    CliResult neither = run_cli(args);
    EXPECT_EQ(neither.code, kExitUsage) << verb << ": " << neither.err;
    EXPECT_NE(neither.err.find("--pg-dsn"), std::string::npos) << verb << ": " << neither.err;
    std::vector<std::string> two = args;
    two.insert(two.end(), {"--data", dir.path(), "--pg-dsn", dsn()});
    CliResult both_flags = run_cli(two);
    EXPECT_EQ(both_flags.code, kExitUsage) << verb << ": " << both_flags.err;
    EXPECT_NE(both_flags.err.find("not both"), std::string::npos) << verb << ": " << both_flags.err;
    // a variable counts as given
    std::vector<std::string> one = args;
    one.insert(one.end(), {"--pg-dsn", dsn()});
    CliResult with_env = run_cli(one, {"RUNLEDGER_DATA=" + dir.path()});
    EXPECT_EQ(with_env.code, kExitUsage) << verb << ": " << with_env.err;
  }
  // The server's stored state is a node's, not the database's.
  CliResult compare = run_cli({"replay", "--compare", "--pg-dsn", dsn()});
  EXPECT_EQ(compare.code, kExitUsage) << compare.err;
  EXPECT_NE(compare.err.find("--compare"), std::string::npos) << compare.err;
}

TEST_F(PgTools, ADatabaseWithoutALogOrNoneAtAllIsSaidTo) {
  const std::string other = "host=127.0.0.1 port=" + std::to_string(log_->pg().port()) +
                            " dbname=postgres user=postgres connect_timeout=5";
  CliResult empty = run_cli({"verify", "--pg-dsn", other});
  EXPECT_EQ(empty.code, kExitNoInput) << empty.out << empty.err;
  EXPECT_NE(empty.err.find("holds no runledger log"), std::string::npos) << empty.err;
  CliResult gone = run_cli({"events", "--pg-dsn",
                            "host=127.0.0.1 port=" + std::to_string(free_port()) +
                                " dbname=runledger user=postgres connect_timeout=5"});
  EXPECT_EQ(gone.code, kExitSoftware) << gone.err;
  EXPECT_NE(gone.err.find("PostgreSQL"), std::string::npos) << gone.err;
}

}  // namespace pg_tools
}  // namespace runledger::testing
