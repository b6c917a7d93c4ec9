// Workload follow: how fast a node with an empty folder folds a long log
// from PostgreSQL (docs/cluster.md: a standby far behind catches up at
// 500,000 events/s or more). A W1 log of N events is generated through the
// engine on a data folder, copied into the (empty) database as a leader
// appends it, in large fenced batches, and then a fresh node is timed from
// its start until its folder ends at the database's head with the same hash.
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "bench/bench.h"
#include "bench/data_folder.h"
#include "bench/log_generator.h"
#include "cluster/cluster_node.h"
#include "cluster/pg_schema.h"
#include "cluster/pg_store.h"

namespace runledger::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr int kSeedLeaseS = 60;
constexpr size_t kSeedBatchEvents = 20'000;

// Appends every event of `from` to the database as the leader of a new
// epoch would, through the cluster's own store (so: fenced, one
// transaction per batch). The database's log must be empty.
Status seed(const EventStore& from, const std::string& dsn, const std::string& scratch,
            BenchResult& r) {
  std::unique_ptr<pg::Connection> c;
  Status st = pg::Connection::open(dsn, 30'000, &c);
  if (st.ok()) st = pg::ensure_schema(*c);
  if (st.ok()) st = pg::prepare_statements(*c);
  if (!st.ok()) return st;
  const std::string lease = std::to_string(kSeedLeaseS);
  pg::Result row;
  st = c->query_prepared(
      pg::kAcquire, {pg::Param::text("bench-seed"), pg::Param::text(""), pg::Param::text(lease)},
      &row);
  if (!st.ok()) return st;
  if (row.rows() != 1) return Status::Unavailable("another node leads the database");
  const uint64_t epoch = static_cast<uint64_t>(row.int64(0, 0));
  if (row.int64(0, 1) != 0) {
    return Status::Invalid("the database already holds a log: give the bench an empty database");
  }
  std::unique_ptr<EventStore> local;
  if (st = open_rocksdb_store(scratch, StoreOptions{}, &local); !st.ok()) return st;
  PgStore store(std::move(local), dsn, 30'000);
  auto renewed = SteadyClock::now();
  auto deadline = [&] { return renewed + std::chrono::seconds(kSeedLeaseS - 5); };
  if (st = store.lead(epoch, 0, Hash{}, deadline()); !st.ok()) return st;
  AppendBatch batch;
  const auto started = SteadyClock::now();
  auto flush = [&]() -> Status {
    if (batch.events.empty()) return Status::Ok();
    if (SteadyClock::now() - renewed > std::chrono::seconds(kSeedLeaseS / 3)) {
      const std::string e = std::to_string(epoch);
      renewed = SteadyClock::now();
      if (Status s = c->query_prepared(pg::kRenew, {pg::Param::text(e), pg::Param::text(lease)});
          !s.ok()) {
        return s;
      }
      store.extend(epoch, deadline());
    }
    Status s = store.append(batch);
    batch.events.clear();
    return s;
  };
  Status read = from.read_range(0, 0, [&](const fb::Event& e, std::string_view bytes) {
    EncodedEvent ev;
    ev.seq = e.seq();
    ev.stream = e.stream()->str();
    ev.stream_version = e.stream_version();
    ev.bytes = std::string(bytes);
    batch.events.push_back(std::move(ev));
    if (batch.events.size() >= kSeedBatchEvents) st = flush();
    return st.ok();
  });
  if (st.ok()) st = flush();
  if (st.ok()) st = read;
  r.figures["seed_seconds"] = std::chrono::duration<double>(SteadyClock::now() - started).count();
  const std::string e = std::to_string(epoch);
  c->query_prepared(pg::kResign, {pg::Param::text(e)}).IgnoreError();
  return st;
}

}  // namespace

BenchResult run_follow(const BenchOptions& o) {
  BenchResult r;
  r.workload = "follow";
  r.unit = "events";
  r.latency_of = "";
  r.parameters = {{"events", o.events}, {"callers", o.callers}};
  if (o.pg_dsn.empty()) {
    r.error = "follow needs --pg-dsn: an empty PostgreSQL database";
    finish(r);
    return r;
  }
  DataFolder generated(""), scratch(""), node(o.data);
  for (const DataFolder* f : {&generated, &scratch, &node}) {
    if (!f->error().empty()) {
      r.error = f->error();
      finish(r);
      return r;
    }
  }
  GeneratedLog g = generate_w1_log(generated.path(), o.events, o.callers, o.progress, r);
  if (!r.ok()) {
    finish(r);
    return r;
  }
  std::unique_ptr<EventStore> log;
  if (Status st = open_rocksdb_store(generated.path(), StoreOptions{}, &log); !st.ok()) {
    r.error = "opening the generated log failed: " + st.ToString();
    finish(r);
    return r;
  }
  if (Status st = seed(*log, o.pg_dsn, scratch.path() + "/seed", r); !st.ok()) {
    r.error = "copying the log into the database failed: " + st.ToString();
    finish(r);
    return r;
  }
  const uint64_t head = log->last_seq();
  // The measured part: a node's start on an empty folder, to the head.
  const auto started = SteadyClock::now();
  EngineRig rig;
  Status st = rig.open_following(node.path(), o.pg_dsn);
  while (st.ok() && rig.store().last_seq() < head) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (SteadyClock::now() - started > std::chrono::hours(1)) {
      st = Status::Unavailable("the node did not reach the head within an hour");
    }
  }
  r.seconds = std::chrono::duration<double>(SteadyClock::now() - started).count();
  if (!st.ok()) {
    r.error = st.ToString();
    finish(r);
    return r;
  }
  r.count = rig.store().last_seq();
  r.events = head;
  r.checks["events_in_the_database"] = head;
  r.checks["events_followed"] = r.count;
  r.expect(rig.store().last_hash() == log->last_hash(),
           "the followed log does not end with the generated log's hash");
  r.expect(r.count == head, fmt::format("followed {} of {} events", r.count, head));
  r.checks["jobs"] = g.plan.jobs;
  finish(r);
  return r;
}

}  // namespace runledger::bench
