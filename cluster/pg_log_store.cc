#include "cluster/pg_log_store.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/sha256.h"
#include "cluster/pg_schema.h"
#include "events/keys.h"

namespace runledger {
namespace {

Status read_only() {
  return Status::Unavailable(
      "the PostgreSQL log is opened read-only here: only the cluster's leader writes it");
}

std::string seq_text(uint64_t seq) { return "seq " + std::to_string(seq); }

// An aligned home for a row's bytes. FlatBuffers reads scalars through typed
// pointers, so a buffer must start at an address aligned for its widest
// scalar; libpq aligns binary values in practice, but does not promise it.
class AlignedBytes {
 public:
  // `bytes` itself when aligned, else a copy valid until the next call.
  std::string_view hold(std::string_view bytes) {
    if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint64_t) == 0) return bytes;
    words_.resize((bytes.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    if (!bytes.empty()) std::memcpy(words_.data(), bytes.data(), bytes.size());
    return {reinterpret_cast<const char*>(words_.data()), bytes.size()};
  }

 private:
  std::vector<uint64_t> words_;
};

// The check the RocksDB store makes of every event it reads back: the bytes
// of the row of `seq` decode, and are the event of that seq. `*bytes`
// becomes the aligned bytes that `*event` points into.
Status check_row(uint64_t seq, std::string_view* bytes, AlignedBytes& scratch,
                 const fb::Event** event) {
  *bytes = scratch.hold(*bytes);
  Status s = decode_event(*bytes, event);
  if (!s.ok()) return Status::Corruption("the row of " + seq_text(seq) + ": " + s.message(), seq);
  if ((*event)->seq() != seq) {
    return Status::Corruption(
        "the row of " + seq_text(seq) + " holds the event of " + seq_text((*event)->seq()), seq);
  }
  return Status::Ok();
}

}  // namespace

Status PgLogStore::open(const std::string& dsn, size_t page_rows,
                        std::unique_ptr<PgLogStore>* out) {
  std::unique_ptr<pg::Connection> conn;
  if (Status s = pg::Connection::open(dsn, kTimeoutMs, &conn); !s.ok()) return s;
  if (Status s = pg::prepare_reader(*conn); !s.ok()) return s;
  std::unique_ptr<PgLogStore> store(
      new PgLogStore(std::move(conn), std::max<size_t>(page_rows, 1)));
  if (Status s = store->refresh(); !s.ok()) return s;
  *out = std::move(store);
  return Status::Ok();
}

Status open_pg_log_store(const std::string& dsn, std::unique_ptr<EventStore>* out) {
  std::unique_ptr<PgLogStore> store;
  if (Status s = PgLogStore::open(dsn, PgLogStore::kPageRows, &store); !s.ok()) return s;
  *out = std::move(store);
  return Status::Ok();
}

Status PgLogStore::query(const char* name, const std::vector<pg::Param>& params,
                         pg::Result* out) const {
  std::lock_guard lock(conn_mu_);
  return conn_->query_prepared(name, params, out);
}

// As a reading RocksDB store sets its tail: the last row's seq and the hash
// of its bytes, not checked here (verify walks up to it and says what is
// wrong).
Status PgLogStore::refresh() {
  pg::Result tail;
  if (Status s = query(pg::kLogTail, {}, &tail); !s.ok()) return s;
  uint64_t seq = 0;
  Hash hash{};
  if (tail.rows() == 1) {
    seq = static_cast<uint64_t>(tail.int64(0, 0));
    hash = sha256(tail.bytes(0, 1));
  }
  std::lock_guard lock(tail_mu_);
  last_seq_ = seq;
  last_hash_ = hash;
  return Status::Ok();
}

uint64_t PgLogStore::last_seq() const {
  std::lock_guard lock(tail_mu_);
  return last_seq_;
}

Hash PgLogStore::last_hash() const {
  std::lock_guard lock(tail_mu_);
  return last_hash_;
}

uint64_t PgLogStore::bound(uint64_t until) const {
  const uint64_t tail = last_seq();
  return until == 0 ? tail : std::min(until, tail);
}

Status PgLogStore::read_range(uint64_t after, uint64_t until, const EventVisitor& visit) const {
  const uint64_t end = bound(until);
  const std::string end_text = std::to_string(end);
  const std::string limit = std::to_string(page_rows_);
  AlignedBytes scratch;
  uint64_t expected = after + 1;
  while (expected <= end) {
    const std::string from = std::to_string(expected - 1);
    pg::Result rows;
    Status s =
        query(pg::kLogRange,
              {pg::Param::text(from), pg::Param::text(end_text), pg::Param::text(limit)}, &rows);
    if (!s.ok()) return s;
    for (int i = 0; i < rows.rows(); ++i) {
      const uint64_t seq = static_cast<uint64_t>(rows.int64(i, 0));
      if (seq != expected) {
        return Status::Corruption(
            seq_text(expected) + " is missing from the log (the next row is " + seq_text(seq) + ")",
            expected);
      }
      std::string_view bytes = rows.bytes(i, 1);
      const fb::Event* e = nullptr;
      if (s = check_row(seq, &bytes, scratch, &e); !s.ok()) return s;
      if (!visit(*e, bytes)) return Status::Ok();
      ++expected;
    }
    if (static_cast<size_t>(rows.rows()) < page_rows_) break;
  }
  return Status::Ok();
}

Status PgLogStore::read_event(uint64_t seq, std::string* bytes) const {
  const auto not_found = [seq] { return Status::NotFound(seq_text(seq) + " is not in the log"); };
  if (seq == 0 || seq > last_seq()) return not_found();
  const std::string seq_param = std::to_string(seq);
  pg::Result row;
  if (Status s = query(pg::kLogEvent, {pg::Param::text(seq_param)}, &row); !s.ok()) return s;
  if (row.rows() != 1) return not_found();
  AlignedBytes scratch;
  std::string_view stored = row.bytes(0, 0);
  const fb::Event* e = nullptr;
  if (Status s = check_row(seq, &stored, scratch, &e); !s.ok()) return s;
  bytes->assign(stored.data(), stored.size());
  return Status::Ok();
}

Status PgLogStore::read_stream(std::string_view stream, uint64_t until_seq,
                               const EventVisitor& visit) const {
  return read_stream_span(stream, 0, 0, until_seq, visit);
}

Status PgLogStore::read_stream_from(std::string_view stream, uint32_t after_version,
                                    uint64_t after_seq, const EventVisitor& visit) const {
  return read_stream_span(stream, after_version, after_seq, 0, visit);
}

Status PgLogStore::read_stream_span(std::string_view stream, uint32_t after_version,
                                    uint64_t after_seq, uint64_t until,
                                    const EventVisitor& visit) const {
  if (!keys::valid_stream_name(stream)) return Status::Invalid("invalid stream name");
  const std::string name(stream);
  const std::string end = std::to_string(bound(until));
  const std::string limit = std::to_string(page_rows_);
  AlignedBytes scratch;
  uint32_t expected = after_version + 1;
  for (;;) {
    const std::string from = std::to_string(expected - 1);
    pg::Result rows;
    Status s = query(pg::kLogStream,
                     {pg::Param::text(name), pg::Param::text(from), pg::Param::text(end),
                      pg::Param::text(limit)},
                     &rows);
    if (!s.ok()) return s;
    for (int i = 0; i < rows.rows(); ++i) {
      const uint64_t seq = static_cast<uint64_t>(rows.int64(i, 0));
      const uint32_t version = static_cast<uint32_t>(rows.int32(i, 1));
      if (version != expected) {
        return Status::Corruption("the log has no row for stream " + name + " version " +
                                      std::to_string(expected) + " (the next is version " +
                                      std::to_string(version) + " at " + seq_text(seq) + ")",
                                  seq);
      }
      std::string_view bytes = rows.bytes(i, 2);
      const fb::Event* e = nullptr;
      if (s = check_row(seq, &bytes, scratch, &e); !s.ok()) return s;
      if (e->stream()->string_view() != stream || e->stream_version() != version) {
        return Status::Corruption("the row of " + seq_text(seq) + " says stream " + name +
                                      " version " + std::to_string(version) +
                                      " but holds an event of another stream or version",
                                  seq);
      }
      ++expected;
      if (seq <= after_seq) continue;  // before the page asked for: checked, not visited
      if (!visit(*e, bytes)) return Status::Ok();
    }
    if (static_cast<size_t>(rows.rows()) < page_rows_) return Status::Ok();
  }
}

Status PgLogStore::stream_version(std::string_view stream, uint32_t* version) const {
  const std::string name(stream);
  const std::string end = std::to_string(last_seq());
  pg::Result row;
  Status s = query(pg::kLogStreamVersion, {pg::Param::text(name), pg::Param::text(end)}, &row);
  if (!s.ok()) return s;
  *version = row.rows() == 1 ? static_cast<uint32_t>(row.int32(0, 0)) : 0;
  return Status::Ok();
}

Status PgLogStore::scan_stream_index(const StreamIndexVisitor& visit) const {
  const std::string end = std::to_string(last_seq());
  const std::string limit = std::to_string(page_rows_);
  // Streams are never empty: ("", 0) is before every key.
  std::string after_stream;
  std::string after_version = "0";
  for (;;) {
    pg::Result rows;
    Status s = query(pg::kLogStreamIndex,
                     {pg::Param::text(after_stream), pg::Param::text(after_version),
                      pg::Param::text(end), pg::Param::text(limit)},
                     &rows);
    if (!s.ok()) return s;
    for (int i = 0; i < rows.rows(); ++i) {
      StreamIndexEntry entry;
      entry.stream = rows.bytes(i, 0);
      entry.version = static_cast<uint32_t>(rows.int32(i, 1));
      entry.seq = static_cast<uint64_t>(rows.int64(i, 2));
      if (!visit(entry)) return Status::Ok();
    }
    const int n = rows.rows();
    if (static_cast<size_t>(n) < page_rows_) return Status::Ok();
    after_stream = std::string(rows.bytes(n - 1, 0));
    after_version = std::to_string(rows.int32(n - 1, 1));
  }
}

Status PgLogStore::append(const AppendBatch&) { return read_only(); }
Status PgLogStore::purge_idempotency(int64_t) { return read_only(); }
Status PgLogStore::put_snapshot(const std::string&) { return read_only(); }

// The kept replies in runledger_idempotency belong to the nodes that serve
// retries, not to the log the tools read.
Status PgLogStore::get_idempotency(std::string_view, std::string*) const {
  return Status::NotFound("the PostgreSQL log holds no idempotency records for the tools");
}

// Views and snapshots are rebuilt by each node in its own folder; the
// database holds the log only.
Status PgLogStore::get_view(std::string_view, std::string*) const {
  return Status::NotFound("the PostgreSQL log holds no views");
}

Status PgLogStore::scan_views(
    std::string_view, std::string_view,
    const std::function<bool(std::string_view, std::string_view)>&) const {
  return Status::Ok();
}

Status PgLogStore::get_snapshot(std::string*) const {
  return Status::NotFound("the PostgreSQL log holds no snapshot");
}

// PostgreSQL checksums its own pages (data checksums, when the cluster was
// initialised with them) and replicates through its WAL; there are no table
// files of ours to read here. The rows themselves are checked as they are
// read.
Status PgLogStore::verify_log_checksums() const { return Status::Ok(); }

}  // namespace runledger
