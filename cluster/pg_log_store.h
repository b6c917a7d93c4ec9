// PgLogStore: the log of a cluster (docs/cluster.md), read straight from
// PostgreSQL's runledger_log, as an EventStore the CLI's reading tools use
// in place of a data folder (`--pg-dsn`). Read-only: it writes nothing, and
// its session refuses writes.
//
// Like a data folder opened read-only, it is a view of the log as it was at
// open (or at the last refresh()): every read ends at the tail seen then,
// while a leader goes on appending. The tail is whole: the leader commits
// each batch with its events in one transaction, in seq order (fenced), so
// that the committed rows are gapless up to the highest seq.
//
// Every event read is verified as the RocksDB store verifies its own: the
// bytes decode (FlatBuffers verifier) and their seq is the row's; a stream
// read also checks that the event is that stream's version and that the
// versions follow one another; else kCorruption naming the row's seq. Reads
// go a page of rows at a time, so memory does not grow with the log.
//
// What only a node's folder holds (idempotency records that are not the
// log's, views, snapshots) is not here: get_* answer kNotFound, scan_views
// visits nothing. The "stream index" is the (stream, version, seq) columns,
// which a follower trusts as it folds, so verify's check of it is a check of
// those columns against the events.
//
// Thread-safe: one connection, used by one call at a time; a visitor runs
// outside of it, so it may read the store again (verify loads a stream from
// inside a walk of the log).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster/pg_connection.h"
#include "events/event_store.h"

namespace runledger {

class PgLogStore final : public EventStore {
 public:
  // Rows read per query.
  static constexpr size_t kPageRows = 10'000;
  // How long a call to the database may take: a page is read through an
  // index, so this is a database that does not answer.
  static constexpr int kTimeoutMs = 30'000;

  // NotFound when the database holds no runledger log; Unavailable when it
  // cannot be reached. `page_rows` (tests make it small to cross pages).
  static Status open(const std::string& dsn, size_t page_rows, std::unique_ptr<PgLogStore>* out);

  Status append(const AppendBatch& batch) override;
  uint64_t last_seq() const override;
  Hash last_hash() const override;
  Status read_range(uint64_t after, uint64_t until, const EventVisitor& visit) const override;
  Status read_event(uint64_t seq, std::string* bytes) const override;
  Status read_stream(std::string_view stream, uint64_t until_seq,
                     const EventVisitor& visit) const override;
  Status read_stream_from(std::string_view stream, uint32_t after_version, uint64_t after_seq,
                          const EventVisitor& visit) const override;
  Status stream_version(std::string_view stream, uint32_t* version) const override;
  Status scan_stream_index(const StreamIndexVisitor& visit) const override;
  Status get_idempotency(std::string_view key, std::string* value) const override;
  Status purge_idempotency(int64_t before_ms) override;
  Status get_view(std::string_view key, std::string* value) const override;
  Status scan_views(std::string_view prefix, std::string_view after_key,
                    const std::function<bool(std::string_view key, std::string_view value)>& visit)
      const override;
  Status put_snapshot(const std::string& snapshot) override;
  Status get_snapshot(std::string* value) const override;
  // Reads the log's tail again: later reads end there.
  Status refresh() override;
  Status verify_log_checksums() const override;

 private:
  PgLogStore(std::unique_ptr<pg::Connection> conn, size_t page_rows)
      : conn_(std::move(conn)), page_rows_(page_rows) {}
  // Runs a prepared statement under the connection's lock.
  Status query(const char* name, const std::vector<pg::Param>& params, pg::Result* out) const;
  // The stream's events with version > after_version and seq <= until, in
  // version order, skipping (but checking) those with seq <= after_seq.
  Status read_stream_span(std::string_view stream, uint32_t after_version, uint64_t after_seq,
                          uint64_t until, const EventVisitor& visit) const;
  // The tail seen at open or the last refresh(); a read's bound for `until` 0.
  uint64_t bound(uint64_t until) const;

  mutable std::mutex conn_mu_;
  const std::unique_ptr<pg::Connection> conn_;  // GUARDED_BY(conn_mu_)
  const size_t page_rows_;
  mutable std::mutex tail_mu_;
  uint64_t last_seq_ = 0;  // GUARDED_BY(tail_mu_)
  Hash last_hash_{};       // GUARDED_BY(tail_mu_)
};

// Opens the log of the PostgreSQL database at `dsn` (a libpq connection
// string) for reading; see PgLogStore::open.
Status open_pg_log_store(const std::string& dsn, std::unique_ptr<EventStore>* out);

}  // namespace runledger
