// Append and replay throughput of the RocksDB store, printed for a person to
// read (nothing here asserts a speed: shared machines are too noisy). By
// default it is a small smoke run; for a real figure run
//   RUNLEDGER_BENCH_EVENTS=2000000 RUNLEDGER_BENCH_BATCH=500
//   build/bin/events_tests --gtest_filter='StoreThroughput.*'
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>

#include <gtest/gtest.h>

#include "events/log_verifier.h"
#include "events/rocksdb_store.h"
#include "tests/events/store_test_support.h"
#include "tests/support/test_support.h"

namespace runledger::testing {
namespace {

constexpr size_t kDefaultEvents = 20'000;
constexpr size_t kDefaultBatchEvents = 500;
// W1 has 11 events per job: one stream each.
constexpr size_t kEventsPerStream = 11;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Batches shaped like W1 traffic: jobs interleaved, 11 events per job.
std::vector<AppendBatch> w1_batches(size_t events, size_t batch_events) {
  LogBuilder log;
  std::vector<AppendBatch> batches;
  const size_t jobs_in_flight = batch_events;
  while (log.seq() < events) {
    AppendBatch b;
    for (size_t i = 0; i < batch_events && log.seq() < events; ++i) {
      const uint64_t n = log.seq();
      const uint64_t job =
          (n / (jobs_in_flight * kEventsPerStream)) * jobs_in_flight + n % jobs_in_flight;
      b.events.push_back(log.next("job/" + std::to_string(job)));
    }
    batches.push_back(std::move(b));
  }
  return batches;
}

// Bytes of all table files: what the log takes on disk once flushed.
uint64_t table_bytes(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".sst") total += entry.file_size();
  }
  return total;
}

TEST(StoreThroughput, AppendReplayAndVerifyEveryEvent) {
  const size_t events = env_number("RUNLEDGER_BENCH_EVENTS", kDefaultEvents);
  const size_t batch_events = env_number("RUNLEDGER_BENCH_BATCH", kDefaultBatchEvents);
  ASSERT_GT(batch_events, 0u);
  const size_t batch_count = (events + batch_events - 1) / batch_events;
  TempDir dir;
  auto store = open_store(dir.path());
  std::vector<AppendBatch> batches = w1_batches(events, batch_events);

  auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  for (const auto& b : batches) ASSERT_TRUE(store->append(b).ok());
  const double append_s = seconds_since(start);
  // CPU of this process (RocksDB's threads included) against wall time: the
  // rest is waiting for the disk.
  const double append_cpu_s = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  batches.clear();
  // Reopening writes the WAL out as a table file: replay then reads the
  // on-disk format (LZ4 blocks), as a restart does.
  store.reset();
  store = open_store(dir.path());
  ASSERT_EQ(store->last_seq(), events);

  uint64_t replayed = 0;
  start = std::chrono::steady_clock::now();
  Status r = store->read_range(0, 0, [&](const fb::Event& e, std::string_view) {
    replayed += e.seq() == replayed + 1 ? 1 : 0;
    return true;
  });
  const double replay_s = seconds_since(start);
  EXPECT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(replayed, events);

  VerifyReport report;
  start = std::chrono::steady_clock::now();
  Status v = verify_log(*store, &report);
  const double verify_s = seconds_since(start);
  EXPECT_TRUE(v.ok()) << v.ToString();
  EXPECT_EQ(report.events, events);

  const double n = static_cast<double>(events);
  std::printf(
      "store throughput: %zu events, batches of %zu, %zu fsyncs\n"
      "  append (durable): %.0f events/s, %.0f batches/s, %.2f us CPU per event\n"
      "  replay (read_range from table files, decoded): %.0f events/s\n"
      "  verify_log: %.0f events/s\n"
      "  table files: %.0f bytes per event (log + stream index)\n",
      events, batch_events, batch_count, n / append_s, static_cast<double>(batch_count) / append_s,
      append_cpu_s * 1e6 / n, n / replay_s, n / verify_s,
      static_cast<double>(table_bytes(dir.path())) / n);
}

}  // namespace
}  // namespace runledger::testing
