// docs/cli.md, "The server": "A log that fails verification at start-up (bad
// checksum, broken hash chain, gap in sequence, undecodable event) stops the
// start with an error that names the first bad sequence number ... A flag may
// start it read-only for forensics", and "Two servers never share a port or
// a data folder". Here for damage the fold of the snapshot and its tail
// never reads (a table block of old events, a record in the middle of the
// write-ahead log, a write-ahead log file before the newest cut short), and
// for a read-only server beside a writable one.
#include <httplib.h>

#include <filesystem>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "events/keys.h"
#include "tests/tools/tools_test_support.h"

namespace runledger::testing {
namespace {

// "first bad seq N" of `runledger verify`; 0 when it names none.
uint64_t seq_named_by_verify(const std::string& data) {
  CliResult r = run_cli({"verify", "--data", data});
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  std::smatch m;
  const std::string text = r.out + r.err;
  if (!std::regex_search(text, m, std::regex("first bad seq ([0-9]+)"))) {
    ADD_FAILURE() << "verify named no seq: " << text;
    return 0;
  }
  return std::stoull(m[1]);
}

// The server on `data` must refuse to start, naming `seq` as verify did, and
// a read-only one must start on it.
void expect_refused_naming(const std::string& data, uint64_t seq) {
  {
    ServerProcess server(data);
    EXPECT_FALSE(server.wait_ready()) << "it served a damaged log";
    EXPECT_EQ(server.wait_exit(ServerProcess::kStopWait), 3) << server.log();
    EXPECT_NE(server.log().find("the first bad event: corruption at seq " + std::to_string(seq)),
              std::string::npos)
        << server.log();
  }
  ServerProcess reader(data, {"--read-only"});
  ASSERT_TRUE(reader.wait_ready()) << reader.log();
  httplib::Client client(reader.url());
  auto health = client.Get("/v1/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 503) << health->body;
  EXPECT_EQ(reader.terminate(), 0) << reader.log();
}

// A folder whose log spans many table blocks: 300 W1 jobs, 3,600 events.
void write_jobs(const std::string& data) {
  CliResult r = run_cli({"bench", "w1", "--jobs", "300", "--callers", "8", "--data", data});
  ASSERT_EQ(r.code, 0) << r.out << r.err;
}

TEST(DamagedStart, ATableBlockOfEventsBeforeTheSnapshotStopsTheStart) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(write_jobs(dir.path()));
  const std::string table = flushed_log_table(dir.path());
  // Given the first block of the log's table damaged: events that the
  // snapshot covers, so that the fold at start-up would not read them
  flip_byte(table, 100);
  const uint64_t bad = seq_named_by_verify(dir.path());
  ASSERT_GE(bad, 1u);
  // Then the server refuses to start, naming the same seq
  expect_refused_naming(dir.path(), bad);
}

// The last seq of a clean log, as verify reports it.
uint64_t verified_last_seq(const std::string& data) {
  CliResult clean = run_cli({"verify", "--data", data});
  EXPECT_EQ(clean.code, 0) << clean.out << clean.err;
  std::smatch m;
  if (!std::regex_search(clean.out, m, std::regex("last seq ([0-9]+)"))) {
    ADD_FAILURE() << "no last seq in: " << clean.out;
    return 0;
  }
  return std::stoull(m[1]);
}

// The offset of a byte in the middle of the payload of the middle record of
// a RocksDB write-ahead log file: 32 KiB blocks of records, each a 7-byte
// header (checksum 4, length 2 little-endian, type 1) and its payload. A
// flipped payload byte fails the record's checksum. (A flipped length byte
// can make the record look cut short by a crash instead, which RocksDB
// tolerates at the end of the log, dropping the records after it.)
uint64_t middle_record_payload_byte(const std::string& wal) {
  constexpr size_t kBlock = 32 * 1024;
  constexpr size_t kHeader = 7;
  const std::string bytes = read_whole_file(wal);
  std::vector<std::pair<size_t, size_t>> payloads;  // offset, length
  for (size_t at = 0; at + kHeader <= bytes.size();) {
    const size_t left_in_block = kBlock - at % kBlock;
    if (left_in_block < kHeader) {
      at += left_in_block;  // the block's trailer
      continue;
    }
    const size_t length = static_cast<uint8_t>(bytes[at + 4]) |
                          (static_cast<size_t>(static_cast<uint8_t>(bytes[at + 5])) << 8);
    if (length == 0) break;  // zeros past the last record
    payloads.emplace_back(at + kHeader, length);
    at += kHeader + length;
  }
  EXPECT_GE(payloads.size(), 3u) << "the WAL holds too few records";
  if (payloads.empty()) return 0;
  const auto& [offset, length] = payloads[payloads.size() / 2];
  return offset + length / 2;
}

// Enqueues the jobs j-`first` to j-`last` on `server`, one request (and one
// write-ahead log record) each.
void enqueue_jobs(ServerProcess& server, int first, int last) {
  httplib::Client client(server.url());
  for (int i = first; i <= last; ++i) {
    const std::string body = R"({"id":"j-)" + std::to_string(i) + R"(","kind":"k","target":"t-)" +
                             std::to_string(i) + R"("})";
    auto r = client.Post("/v1/jobs", body, "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 201) << r->body;
  }
}

TEST(DamagedStart, ADamagedRecordInTheMiddleOfTheWriteAheadLogStopsTheStart) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(write_jobs(dir.path()));
  const uint64_t flushed = verified_last_seq(dir.path());
  // Given jobs enqueued one request at a time, each its own WAL record, and
  // a server killed before anything was flushed
  {
    ServerProcess server(dir.path());
    ASSERT_TRUE(server.wait_ready()) << server.log();
    ASSERT_NO_FATAL_FAILURE(enqueue_jobs(server, 1, 40));
    server.kill_hard();
  }
  const uint64_t last_seq = verified_last_seq(dir.path());
  ASSERT_GE(last_seq, flushed + 40);
  const std::string wal = newest_wal(dir.path());
  // When a byte of a record in the middle of that WAL is flipped
  flip_byte(wal, middle_record_payload_byte(wal));
  // Then verify names an event that the WAL held, not the end of the log
  const uint64_t bad = seq_named_by_verify(dir.path());
  EXPECT_GT(bad, flushed);
  EXPECT_LE(bad, last_seq);
  // and the server refuses to start, naming it too
  expect_refused_naming(dir.path(), bad);
}

TEST(DamagedStart, AWriteAheadLogFileBeforeTheNewestCutShortStopsTheStart) {
  // Given 30 jobs and a kill, a start (which keeps the write-ahead log it
  // recovered from, its events not yet in a table file, and opens a new
  // one), two jobs more and a kill again
  TempDir dir;
  {
    ServerProcess server(dir.path());
    ASSERT_TRUE(server.wait_ready()) << server.log();
    ASSERT_NO_FATAL_FAILURE(enqueue_jobs(server, 1, 30));
    server.kill_hard();
  }
  {
    ServerProcess server(dir.path());
    ASSERT_TRUE(server.wait_ready()) << server.log();
    ASSERT_NO_FATAL_FAILURE(enqueue_jobs(server, 31, 32));
    server.kill_hard();
  }
  const std::vector<std::string> wals = wal_files(dir.path());
  ASSERT_GE(wals.size(), 2u);
  // When the older write-ahead log is cut to a quarter: its later events are
  // gone, the newer one's are not
  std::filesystem::resize_file(wals.front(), file_size(wals.front()) / 4);
  // Then verify names a missing seq among the first 30 jobs' events
  const uint64_t bad = seq_named_by_verify(dir.path());
  EXPECT_GE(bad, 2u);
  EXPECT_LE(bad, 30u);
  // and the server refuses to start, naming it too, where it used to fold
  // the events after the gap and append after them
  expect_refused_naming(dir.path(), bad);
}

// The last seq a server on `data` reports in /v1/health.
uint64_t health_last_seq(const ServerProcess& server) {
  httplib::Client client(server.url());
  auto health = client.Get("/v1/health");
  if (!health || health->status != 200) {
    ADD_FAILURE() << "no health: " << (health ? health->body : "no answer");
    return 0;
  }
  return nlohmann::json::parse(health->body).value("last_seq", uint64_t{0});
}

TEST(DamagedStart, AfterACleanStopAWriteAheadLogCutShortLosesNothing) {
  // Given 20 jobs and a clean stop, which writes what the store holds in
  // memory out to its table files
  TempDir dir;
  uint64_t acknowledged = 0;
  {
    ServerProcess server(dir.path());
    ASSERT_TRUE(server.wait_ready()) << server.log();
    ASSERT_NO_FATAL_FAILURE(enqueue_jobs(server, 1, 20));
    acknowledged = health_last_seq(server);
    ASSERT_EQ(server.terminate(), 0) << server.log();
  }
  ASSERT_GE(acknowledged, 20u);
  // When every write-ahead log file left is cut to its first 64 bytes (the
  // stop's snapshot, its last record, would go alone with less)
  for (const std::string& wal : wal_files(dir.path())) {
    std::filesystem::resize_file(wal, std::min<uint64_t>(file_size(wal), 64));
  }
  // Then the log still holds every acknowledged event, and the server
  // starts on it and serves the last job
  EXPECT_EQ(verified_last_seq(dir.path()), acknowledged);
  ServerProcess server(dir.path());
  ASSERT_TRUE(server.wait_ready()) << server.log();
  EXPECT_EQ(health_last_seq(server), acknowledged);
  httplib::Client client(server.url());
  auto last_job = client.Get("/v1/jobs/j-20");
  ASSERT_TRUE(last_job);
  EXPECT_EQ(last_job->status, 200) << last_job->body;
}

TEST(DamagedStart, AReadOnlyServerAndAWritableOneNeverShareAFolder) {
  TempDir dir;
  {
    ServerProcess first(dir.path());  // creates the store
    ASSERT_TRUE(first.wait_ready()) << first.log();
    // A read-only server beside a writable one is refused...
    ServerProcess reader(dir.path(), {"--read-only"});
    EXPECT_FALSE(reader.wait_ready()) << "a read-only server shares the folder";
    EXPECT_NE(reader.log().find("in use by another runledgerd"), std::string::npos) << reader.log();
    EXPECT_EQ(first.terminate(), 0) << first.log();
  }
  // ...and a writable one beside a read-only one
  ServerProcess reader(dir.path(), {"--read-only"});
  ASSERT_TRUE(reader.wait_ready()) << reader.log();
  ServerProcess writer(dir.path());
  EXPECT_FALSE(writer.wait_ready()) << "a writable server shares the folder";
  EXPECT_NE(writer.log().find("in use by another runledgerd"), std::string::npos) << writer.log();
  // while the CLI still reads it
  CliResult verify = run_cli({"verify", "--data", dir.path()});
  EXPECT_EQ(verify.code, 0) << verify.out << verify.err;
  EXPECT_EQ(reader.terminate(), 0) << reader.log();
}

}  // namespace
}  // namespace runledger::testing
