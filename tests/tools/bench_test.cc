// runledger bench through the real binary: every workload runs at a tiny
// size with --json, prints one JSON object with the figures of docs/performance.md,
// and its own correctness check passed (every job SUCCEEDED, the event
// count as expected). No speed is asserted: the machine is shared.
#include <algorithm>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/tools/tools_test_support.h"

namespace runledger::testing {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;  // the workload's own check failed
constexpr int kW1Commands = 11;
constexpr int kW1Events = 12;

// Runs `runledger bench <args> --json` and parses what it printed.
nlohmann::json bench_json(std::vector<std::string> args, int want_code = kExitOk) {
  args.insert(args.begin(), "bench");
  args.push_back("--json");
  CliResult r = run_cli(args);
  EXPECT_EQ(r.code, want_code) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_TRUE(j.is_object()) << "not one JSON object: " << r.out;
  return j.is_object() ? j : nlohmann::json::object();
}

// The figures every workload reports, with sane values.
void expect_common_figures(const nlohmann::json& j, const std::string& workload) {
  EXPECT_EQ(j.value("workload", ""), workload);
  EXPECT_EQ(j.value("ok", false), true) << j.dump(2);
  EXPECT_TRUE(j.at("failures").empty()) << j.dump(2);
  for (const char* key : {"unit", "count", "seconds", "per_s", "latency_ms", "fsync_batches",
                          "mean_batch_commands", "events", "disk_bytes", "bytes_per_event",
                          "rss_bytes", "peak_rss_bytes", "checks", "figures", "machine"}) {
    EXPECT_TRUE(j.contains(key)) << key << " missing in " << j.dump(2);
  }
  EXPECT_GT(j.value("peak_rss_bytes", 0.0), 0.0);
  EXPECT_GE(j.value("peak_rss_bytes", 0.0), j.value("rss_bytes", 0.0));
  EXPECT_GT(j["machine"].value("cpus", 0), 0);
  EXPECT_FALSE(j["machine"].value("cpu_model", "").empty());
  EXPECT_GT(j["machine"].value("memory_bytes", 0.0), 0.0);
  // The binary reports the allocator this build linked (CMakeLists.txt).
  EXPECT_EQ(j["machine"].value("allocator", ""), RL_ALLOCATOR);
}

TEST(BenchW1, RunsEveryJobToSucceededAndReportsTheFigures) {
  nlohmann::json j = bench_json({"w1", "--callers", "4", "--jobs", "40"});
  expect_common_figures(j, "w1");
  EXPECT_EQ(j["checks"].value("jobs_succeeded", 0), 40);
  EXPECT_EQ(j.value("unit", ""), "commands");
  EXPECT_EQ(j.value("count", 0), 40 * kW1Commands);
  EXPECT_EQ(j.value("events", 0), 40 * kW1Events);
  EXPECT_EQ(j["latency_ms"].value("samples", 0), 40 * kW1Commands);
  const auto& lat = j["latency_ms"];
  EXPECT_LE(lat.value("p50", 0.0), lat.value("p99", 0.0));
  EXPECT_LE(lat.value("p99", 0.0), lat.value("p999", 0.0));
  EXPECT_LE(lat.value("p999", 0.0), lat.value("max", 0.0));
  // Group commit: every command is in some fsynced batch, none is in two.
  EXPECT_GT(j.value("fsync_batches", 0), 0);
  EXPECT_LE(j.value("fsync_batches", 0), 40 * kW1Commands);
  EXPECT_GE(j.value("mean_batch_commands", 0.0), 1.0);
  EXPECT_GT(j.value("bytes_per_event", 0.0), 0.0);
  // The process's CPU time per command: more than nothing, and no more than
  // every core busy for the whole run (twice that, for the coarse clock of
  // some kernels' CPU accounting).
  const double cpu_us = j["figures"].value("cpu_us_per_command", 0.0);
  const double cores = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_GT(cpu_us, 0.0);
  EXPECT_LT(cpu_us, 2 * cores * j.value("seconds", 0.0) * 1e6 / (40 * kW1Commands));
}

TEST(BenchW1, ChainedCallersRunEveryJobToSucceededAndShareFsyncs) {
  // 300 callers in flight without a thread each: every job must succeed,
  // and with that many commands waiting the group commits hold many each.
  nlohmann::json j = bench_json({"w1", "--chained", "--callers", "300", "--jobs", "600"});
  expect_common_figures(j, "w1");
  EXPECT_EQ(j["parameters"].value("chained", false), true);
  EXPECT_EQ(j["checks"].value("jobs_succeeded", 0), 600);
  EXPECT_EQ(j.value("count", 0), 600 * kW1Commands);
  EXPECT_EQ(j.value("events", 0), 600 * kW1Events);
  EXPECT_EQ(j["latency_ms"].value("samples", 0), 600 * kW1Commands);
  // The first batch already has all 300 enqueues unless the engine wrote
  // while they were being submitted; either way far more than one each.
  EXPECT_GT(j.value("mean_batch_commands", 0.0), 10.0) << j.dump(2);
}

TEST(BenchW1, PrintsATableWithoutJson) {
  CliResult r = run_cli({"bench", "w1", "--callers", "2", "--jobs", "5"});
  EXPECT_EQ(r.code, kExitOk) << r.out << r.err;
  EXPECT_NE(r.out.find("runledger bench w1: OK"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("commands/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("p999"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("machine"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << "progress must stay quiet when not on a terminal: " << r.err;
}

TEST(BenchW1, RefusesADataFolderThatIsNotEmpty) {
  TempDir data;
  std::ofstream(data.path() + "/something") << "x";
  nlohmann::json j = bench_json({"w1", "--jobs", "2", "--data", data.path()}, kExitSoftware);
  EXPECT_EQ(j.value("ok", true), false);
  EXPECT_NE(j.value("error", "").find("must be an empty folder"), std::string::npos) << j.dump();
}

TEST(BenchW1Http, RunsEveryJobThroughAnInProcessServer) {
  nlohmann::json j = bench_json({"w1-http", "--clients", "4", "--jobs", "30"});
  expect_common_figures(j, "w1-http");
  EXPECT_EQ(j["checks"].value("jobs_succeeded_seen_by_clients", 0), 30);
  EXPECT_EQ(j["checks"].value("jobs_succeeded", 0), 30);
  EXPECT_EQ(j.value("count", 0), 30 * kW1Commands);
  EXPECT_EQ(j.value("events", 0), 30 * kW1Events);
  EXPECT_GT(j.value("fsync_batches", 0), 0);
}

TEST(BenchW1Http, ManyClientsShareOneClientThread) {
  nlohmann::json j =
      bench_json({"w1-http", "--clients", "8", "--client-threads", "1", "--jobs", "40"});
  expect_common_figures(j, "w1-http");
  EXPECT_EQ(j["parameters"].value("client_threads", 0), 1);
  EXPECT_EQ(j["checks"].value("jobs_succeeded_seen_by_clients", 0), 40);
  EXPECT_EQ(j.value("count", 0), 40 * kW1Commands);
  EXPECT_EQ(j["latency_ms"].value("samples", 0), 40 * kW1Commands);
}

TEST(BenchW1Http, SaysWhichCommandTheServerRefused) {
  // Given a server whose longest lease is shorter than the one W1's claims
  // ask for (60 s)
  TempDir data;
  ServerProcess server(data.path(), {"--lease-max-s", "30"});
  ASSERT_TRUE(server.wait_ready()) << server.log();
  // When W1 runs against it
  nlohmann::json j = bench_json(
      {"w1-http", "--clients", "2", "--jobs", "4", "--server", server.url()}, kExitFailed);
  // Then the run fails, naming the command and the reply it got
  EXPECT_EQ(j.value("ok", true), false);
  ASSERT_TRUE(j.contains("failures") && !j["failures"].empty()) << j.dump(2);
  const std::string first_failure = j["failures"][0].get<std::string>();
  EXPECT_NE(first_failure.find("claim"), std::string::npos) << first_failure;
  EXPECT_NE(first_failure.find("422"), std::string::npos) << first_failure;
}

TEST(BenchW1Http, DrivesARunningServerAndSaysWhenItIsGone) {
  TempDir data;
  ServerProcess server(data.path());
  ASSERT_TRUE(server.wait_ready()) << server.log();
  nlohmann::json j =
      bench_json({"w1-http", "--clients", "3", "--jobs", "12", "--server", server.url()});
  expect_common_figures(j, "w1-http");
  EXPECT_EQ(j["checks"].value("jobs_succeeded_seen_by_clients", 0), 12);
  EXPECT_GE(j["figures"].value("events_appended", 0), 12 * kW1Events);
  // A second run on the same server uses job ids of its own.
  nlohmann::json again =
      bench_json({"w1-http", "--clients", "2", "--jobs", "4", "--server", server.url()});
  EXPECT_EQ(again.value("ok", false), true) << again.dump(2);

  ASSERT_EQ(server.terminate(), 0) << server.log();
  nlohmann::json gone =
      bench_json({"w1-http", "--jobs", "1", "--server", server.url()}, kExitUnreachable);
  EXPECT_NE(gone.value("error", "").find("does not answer"), std::string::npos) << gone.dump();
}

TEST(BenchReplay, FoldsTheWholeGeneratedLog) {
  nlohmann::json j = bench_json({"replay", "--events", "1200", "--callers", "4"});
  expect_common_figures(j, "replay");
  EXPECT_EQ(j.value("unit", ""), "events");
  EXPECT_EQ(j.value("count", 0), 1200);  // 100 jobs of 12 events
  EXPECT_EQ(j["checks"].value("events_folded", 0), 1200);
  EXPECT_EQ(j["checks"].value("jobs_succeeded", 0), 100);
  EXPECT_EQ(j["checks"].value("jobs_in_memory", -1), 0);  // finished: read from the store
  EXPECT_EQ(j["parameters"].value("keep_finished", true), false);
}

TEST(BenchReplay, KeepsEveryFinishedJobWhenAsked) {
  nlohmann::json j =
      bench_json({"replay", "--events", "1200", "--callers", "4", "--keep-finished"});
  expect_common_figures(j, "replay");
  EXPECT_EQ(j["checks"].value("jobs_succeeded", 0), 100);
  EXPECT_EQ(j["checks"].value("jobs_in_memory", 0), 100);
  EXPECT_EQ(j["parameters"].value("keep_finished", false), true);
}

TEST(BenchRestart, OpensTheEngineOnTheSnapshotAndTail) {
  nlohmann::json j = bench_json({"restart", "--events", "1200", "--callers", "4"});
  expect_common_figures(j, "restart");
  EXPECT_EQ(j["checks"].value("served_seq", 0), 1200);
  // No periodic snapshot at this size, and the crash dropped the final one.
  EXPECT_EQ(j["figures"].value("snapshot_seq", -1), 0);
  EXPECT_EQ(j["figures"].value("tail_events", 0), 1200);
  EXPECT_GT(j.value("seconds", 0.0), 0.0);
  // Timed in a runledgerd of its own, whose log says how long the store took.
  EXPECT_GT(j["figures"].value("server_peak_rss_bytes", 0), 0);
  EXPECT_GT(j["figures"].value("store_open_seconds", 0.0), 0.0);
  EXPECT_LT(j["figures"].value("store_open_seconds", 0.0), j.value("seconds", 0.0));
}

TEST(BenchLeaseExpiry, RecordsEveryLeaseThatRanOut) {
  nlohmann::json j = bench_json({"lease-expiry", "--leases", "20", "--lease-s", "1"});
  expect_common_figures(j, "lease-expiry");
  EXPECT_EQ(j["checks"].value("lease_expired_events", 0), 20);
  EXPECT_EQ(j["checks"].value("jobs_queued_again", 0), 20);
  EXPECT_EQ(j["latency_ms"].value("samples", 0), 20);
  EXPECT_GE(j["latency_ms"].value("p50", -1.0), 0.0);  // never recorded before it was due
}

TEST(BenchLeaseExpiry, WritesSnapshotsAsOftenAsAsked) {
  nlohmann::json j = bench_json(
      {"lease-expiry", "--leases", "20", "--lease-s", "1", "--snapshot-every-events", "10"});
  expect_common_figures(j, "lease-expiry");
  EXPECT_EQ(j["checks"].value("lease_expired_events", 0), 20);
  // 60 events (20 enqueued, leased, expired); the engine's own interval
  // would write none at this size.
  EXPECT_GE(j["figures"].value("snapshot_seq", 0), 40);
}

TEST(BenchMemory, FinishedJobsLeaveMemoryAndStayReadable) {
  nlohmann::json j = bench_json({"memory", "--finished-jobs", "30", "--callers", "4"});
  expect_common_figures(j, "memory");
  EXPECT_EQ(j["checks"].value("jobs_in_memory", -1), 0);
  EXPECT_EQ(j["checks"].value("finished_jobs_readable", false), true);
  EXPECT_EQ(j["checks"].value("jobs_succeeded", 0), 30);
  EXPECT_GT(j.value("rss_bytes", 0.0), 0.0);
  // Where the memory is: the store's parts, the heap, the RSS before the
  // free memory was given back (at least what remains after it).
  const auto& f = j["figures"];
  for (const char* part : {"store_table_readers.log_bytes", "store_table_readers.views_bytes",
                           "store_table_readers.stream_index_bytes", "store_memtables_bytes",
                           "store_block_cache_bytes"}) {
    EXPECT_TRUE(f.contains(part)) << part << " missing from " << f.dump();
  }
  EXPECT_GT(f.value("store_memtables_bytes", 0.0), 0.0);  // 30 jobs' events, not yet flushed
  EXPECT_GT(f.value("heap_in_use_bytes", 0.0), 0.0);
  EXPECT_GE(f.value("rss_before_release_bytes", 0.0), 0.9 * j.value("rss_bytes", 0.0));
}

TEST(BenchMemory, ChainedCallersLeaveNoFinishedJobInMemoryEither) {
  // Jobs finished by one batch leave memory once the next batch is settled;
  // the last batch's once the engine has written it: none may be left over.
  nlohmann::json j =
      bench_json({"memory", "--finished-jobs", "200", "--callers", "50", "--chained"});
  expect_common_figures(j, "memory");
  EXPECT_EQ(j["checks"].value("jobs_in_memory", -1), 0);
  EXPECT_EQ(j["checks"].value("finished_jobs_readable", false), true);
  EXPECT_EQ(j["checks"].value("jobs_succeeded", 0), 200);
}

TEST(BenchHelp, ListsEveryWorkload) {
  CliResult r = run_cli({"bench", "--help"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  for (const char* w : {"w1", "w1-http", "replay", "restart", "lease-expiry", "memory"}) {
    EXPECT_NE(r.out.find(w), std::string::npos) << w << " missing in " << r.out;
  }
}

}  // namespace
}  // namespace runledger::testing
