// PgStore: the EventStore of a cluster node (docs/cluster.md). The log's
// truth is in PostgreSQL; the node's own RocksDB folder (`local`) holds a
// copy of it with everything that can be rebuilt from it (views, the stream
// index, snapshots), and serves every read.
//
// While this node leads, append() first writes the batch's events and
// idempotency records to PostgreSQL in one transaction, sent in one round
// trip, fenced by runledger_fence(): it commits only while this node's
// epoch leads and the head is where this node last left it. Only then is the
// batch written to the local folder, and only then does the engine release
// its replies. A batch refused by the fence, or whose commit was not
// confirmed (a timeout, a lost connection: in doubt), fails the append: the
// engine answers 503 and rebuilds, and this store steps down (the callback
// tells the node), which follows the database again before it may lead.
// An append is never cancelled once sent (cancelling a commit that waits
// for a synchronous standby would make it visible unreplicated).
//
// While it does not lead, append() writes to the local folder only what the
// database already holds: the events and records of the replica the node is
// applying (admit_replica), and views and snapshots; anything else is
// refused, so that no command is ever acknowledged on a standby.
//
// Thread-safe: append() runs on the engine's writer thread; lead(),
// extend() and step_down() on the node's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cluster/pg_array.h"
#include "cluster/pg_connection.h"
#include "engine/engine.h"
#include "events/forwarding_store.h"

namespace runledger {

class PgStore final : public ForwardingStore {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;

  // `timeout_ms` bounds each call to the database.
  PgStore(std::shared_ptr<EventStore> local, std::string dsn, int timeout_ms);

  Status append(const AppendBatch& batch) override;
  Status purge_idempotency(int64_t before_ms) override;

  // Called (outside any lock of this store) when it steps down by itself:
  // a fenced append, one in doubt, or the lease deadline passed.
  void on_step_down(std::function<void(const std::string& why)> f) { on_step_down_ = std::move(f); }

  // This node leads `epoch` from the head (seq, hash) it found and has
  // folded, until `deadline` unless extended. Opens the writing connection.
  Status lead(uint64_t epoch, uint64_t head_seq, const Hash& head_hash, SteadyTime deadline);
  // A renewal succeeded: writes may be answered until `deadline`.
  void extend(uint64_t epoch, SteadyTime deadline);
  // Stops leading (no-op when not leading); the node's own decision.
  void step_down();
  // The epoch led, if any, and the head this node last wrote.
  std::optional<uint64_t> epoch_led() const;

  // A replica the engine is about to write: admitted by append() while not
  // leading, until released (at most a few are in flight).
  void admit_replica(std::shared_ptr<const Replica> replica);
  void release_replica(const std::shared_ptr<const Replica>& replica);

 private:
  struct Leadership {
    uint64_t epoch = 0;
    uint64_t head_seq = 0;
    Hash head_hash{};
    SteadyTime deadline{};
  };
  Status append_to_database(const AppendBatch& batch, const Leadership& l, uint64_t* head_seq,
                            Hash* head_hash);
  // Whether every event and record of `batch` is in an admitted replica.
  bool replica_holds(const AppendBatch& batch) const;  // REQUIRES: mu_
  void lose(const std::string& why);

  const std::string dsn_;
  const int timeout_ms_;
  std::function<void(const std::string&)> on_step_down_;

  // The writing connection: the writer thread's while it appends, and
  // lead()'s to replace.
  std::mutex conn_mu_;
  std::unique_ptr<pg::Connection> conn_;  // GUARDED_BY(conn_mu_)
  // A batch's columns (pg::kInsertEvents, pg::kInsertIdempotency), kept
  // from one batch to the next so that their buffers are not made anew.
  struct EventColumns {
    pg::BinaryArray seq{pg::Element::kInt8}, stream{pg::Element::kText},
        version{pg::Element::kInt4}, type{pg::Element::kText},
        recorded_at{pg::Element::kTimestamptz}, actor{pg::Element::kText},
        command_id{pg::Element::kText}, data{pg::Element::kJsonb}, bytes{pg::Element::kBytea},
        hash{pg::Element::kBytea}, prev_hash{pg::Element::kBytea};
    pg::BinaryArray key{pg::Element::kBytea}, record{pg::Element::kBytea},
        kept_ms{pg::Element::kInt8};
    void clear() {
      for (pg::BinaryArray* a : {&seq, &stream, &version, &type, &recorded_at, &actor, &command_id,
                                 &data, &bytes, &hash, &prev_hash, &key, &record, &kept_ms}) {
        a->clear();
      }
    }
  };
  EventColumns columns_;  // GUARDED_BY(conn_mu_)

  mutable std::mutex mu_;
  std::optional<Leadership> lead_;                        // GUARDED_BY(mu_)
  std::vector<std::shared_ptr<const Replica>> replicas_;  // GUARDED_BY(mu_)
};

}  // namespace runledger
