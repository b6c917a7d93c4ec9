#include "cluster/pg_store.h"

#include <algorithm>

#include "base/sha256.h"
#include "cluster/pg_schema.h"
#include "engine/log.h"
#include "events/event_json.h"

namespace runledger {
namespace {

Status not_leading() {
  return Status::Unavailable("this node does not lead the cluster: writes go to the leader");
}

std::string_view hash_bytes(const Hash& h) {
  return {reinterpret_cast<const char*>(h.data()), h.size()};
}

// U+2400 SYMBOL FOR NULL, in UTF-8.
constexpr std::string_view kNulSymbol = "\xE2\x90\x80";

// `j` with U+0000 in its strings and keys replaced by U+2400.
nlohmann::json without_nul(const nlohmann::json& j) {
  auto replaced = [](std::string s) {
    for (size_t at = s.find('\0'); at != std::string::npos; at = s.find('\0', at)) {
      s.replace(at, 1, kNulSymbol);
    }
    return s;
  };
  if (j.is_string()) return replaced(j.get<std::string>());
  if (j.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& v : j) out.push_back(without_nul(v));
    return out;
  }
  if (j.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, v] : j.items()) out[replaced(k)] = without_nul(v);
    return out;
  }
  return j;
}

// An event's data as the data column's jsonb takes it. jsonb cannot hold
// U+0000 (a string field of a request may), and refusing it would fail the
// whole batch and cost the leadership: in that column it shows as U+2400;
// the event's bytes keep it.
std::string data_column(const fb::Event& e) {
  const nlohmann::json data = event_data_json(e);
  std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.find("\\u0000") == std::string::npos) return text;
  return without_nul(data).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

PgStore::PgStore(std::shared_ptr<EventStore> local, std::string dsn, int timeout_ms)
    : ForwardingStore(std::move(local)), dsn_(std::move(dsn)), timeout_ms_(timeout_ms) {}

Status PgStore::lead(uint64_t epoch, uint64_t head_seq, const Hash& head_hash,
                     SteadyTime deadline) {
  std::lock_guard<std::mutex> conn_lk(conn_mu_);
  if (conn_ == nullptr || conn_->broken()) {
    conn_.reset();
    if (Status st = pg::Connection::open(dsn_, timeout_ms_, &conn_); !st.ok()) return st;
  }
  if (Status st = pg::prepare_statements(*conn_); !st.ok()) {
    conn_.reset();
    return st;
  }
  std::lock_guard<std::mutex> lk(mu_);
  lead_ = Leadership{epoch, head_seq, head_hash, deadline};
  return Status::Ok();
}

void PgStore::extend(uint64_t epoch, SteadyTime deadline) {
  std::lock_guard<std::mutex> lk(mu_);
  if (lead_ && lead_->epoch == epoch) lead_->deadline = deadline;
}

void PgStore::step_down() {
  std::lock_guard<std::mutex> lk(mu_);
  lead_.reset();
}

std::optional<uint64_t> PgStore::epoch_led() const {
  std::lock_guard<std::mutex> lk(mu_);
  if (!lead_) return std::nullopt;
  return lead_->epoch;
}

void PgStore::admit_replica(std::shared_ptr<const Replica> replica) {
  std::lock_guard<std::mutex> lk(mu_);
  replicas_.push_back(std::move(replica));
}

void PgStore::release_replica(const std::shared_ptr<const Replica>& replica) {
  std::lock_guard<std::mutex> lk(mu_);
  replicas_.erase(std::remove(replicas_.begin(), replicas_.end(), replica), replicas_.end());
}

void PgStore::lose(const std::string& why) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!lead_) return;
    lead_.reset();
  }
  log::warn("stepping down: {}", why);
  if (on_step_down_) on_step_down_(why);
}

bool PgStore::replica_holds(const AppendBatch& batch) const {
  if (batch.events.empty() && batch.idempotency.empty()) return true;  // views, snapshots
  for (const auto& e : batch.events) {
    bool found = false;
    for (const auto& replica : replicas_) {
      const auto& events = replica->events;
      auto it = std::lower_bound(events.begin(), events.end(), e.seq,
                                 [](const EncodedEvent& a, uint64_t seq) { return a.seq < seq; });
      if (it != events.end() && it->seq == e.seq) {
        found = it->bytes == e.bytes;
        break;
      }
    }
    if (!found) return false;
  }
  for (const auto& rec : batch.idempotency) {
    bool found = false;
    for (const auto& replica : replicas_) {
      if (std::find(replica->idempotency.begin(), replica->idempotency.end(), rec) !=
          replica->idempotency.end()) {
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

Status PgStore::append(const AppendBatch& batch) {
  std::unique_lock<std::mutex> conn_lk(conn_mu_);
  Leadership l;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!lead_) {
      if (!replica_holds(batch)) return not_leading();
      conn_lk.unlock();
      return ForwardingStore::append(batch);
    }
    l = *lead_;
  }
  if (!(batch.events.empty() && batch.idempotency.empty())) {
    // No write is answered once the lease may have passed to another node.
    if (std::chrono::steady_clock::now() >= l.deadline) {
      conn_lk.unlock();
      lose("the leadership lease was not renewed in time");
      return Status::Unavailable("the leadership lease ran out before this write: not written");
    }
    uint64_t head_seq = l.head_seq;
    Hash head_hash = l.head_hash;
    Status st = append_to_database(batch, l, &head_seq, &head_hash);
    if (!st.ok()) {
      conn_lk.unlock();
      lose(st.ToString());
      return st;
    }
    std::lock_guard<std::mutex> lk(mu_);
    if (lead_ && lead_->epoch == l.epoch) {
      lead_->head_seq = head_seq;
      lead_->head_hash = head_hash;
    }
  }
  conn_lk.unlock();
  Status st = ForwardingStore::append(batch);
  // The database has the batch and this folder does not: the node follows
  // the database again to take it in before it writes on.
  if (!st.ok()) lose("the local folder refused a batch the database holds: " + st.ToString());
  return st;
}

// REQUIRES: conn_mu_. One round trip: the fence, the events, the records,
// then the Sync that commits them as one implicit transaction, or rolls all
// of it back at the first error.
Status PgStore::append_to_database(const AppendBatch& batch, const Leadership& l,
                                   uint64_t* head_seq, Hash* head_hash) {
  if (conn_ == nullptr || conn_->broken()) {
    conn_.reset();
    Status st = pg::Connection::open(dsn_, timeout_ms_, &conn_);
    if (st.ok()) st = pg::prepare_statements(*conn_);
    if (!st.ok()) {
      conn_.reset();
      return Status::Unavailable("the database cannot be reached: " + st.ToString());
    }
  }
  uint64_t to_seq = l.head_seq;
  Hash to_hash = l.head_hash;  // the batch's last event's
  if (!batch.events.empty()) {
    to_seq = batch.events.back().seq;
    to_hash = sha256(batch.events.back().bytes);
  }
  const std::string epoch = std::to_string(l.epoch);
  const std::string from = std::to_string(l.head_seq);
  const std::string to = std::to_string(to_seq);
  // Every statement's parameters are made before the first one is sent.
  // The fence takes the leader row's lock, which the server holds until the
  // batch's Sync; a leader stopped between two of its statements (SIGSTOP, a
  // paused VM) holds it with no timeout, since the server's
  // idle_in_transaction_session_timeout only starts after a Sync, until a
  // standby ends its session once the lease has run out (ClusterNode). Made
  // first, the three statements (the fence, the events, the kept replies,
  // each column of a batch one array) leave in one burst of writes.
  EventColumns& c = columns_;
  c.clear();
  Status st;
  for (size_t i = 0; st.ok() && i < batch.events.size(); ++i) {
    const EncodedEvent& ev = batch.events[i];
    const fb::Event* e = nullptr;
    st = decode_event(ev.bytes, &e);
    if (!st.ok()) break;
    c.seq.add_int8(static_cast<int64_t>(ev.seq));
    c.stream.add(ev.stream);
    c.version.add_int4(static_cast<int32_t>(ev.stream_version));
    c.type.add(event_type_name(e->payload_type()));
    c.recorded_at.add_timestamptz_ms(e->recorded_at_ms());
    c.actor.add(e->actor() ? e->actor()->string_view() : std::string_view());
    c.command_id.add(e->command_id() ? e->command_id()->string_view() : std::string_view());
    c.data.add_jsonb(data_column(*e));
    c.bytes.add(ev.bytes);
    const Hash h = i + 1 == batch.events.size() ? to_hash : sha256(ev.bytes);
    c.hash.add(hash_bytes(h));
    c.prev_hash.add(std::string_view(reinterpret_cast<const char*>(e->prev_hash()->data()),
                                     e->prev_hash()->size()));
  }
  for (const auto& [key, record] : batch.idempotency) {
    // The record's first 8 bytes are when it was kept (engine/idempotency.h).
    int64_t ms = 0;
    for (size_t b = 0; b < 8 && b < record.size(); ++b) {
      ms = (ms << 8) | static_cast<uint8_t>(record[b]);
    }
    c.key.add(key);
    c.record.add(record);
    c.kept_ms.add_int8(ms);
  }
  if (st.ok()) st = conn_->pipeline_begin();
  if (st.ok()) {
    st = conn_->pipeline_queue(pg::kFence,
                               {pg::Param::text(epoch), pg::Param::text(from), pg::Param::text(to),
                                pg::Param::bytes(hash_bytes(to_hash))});
  }
  if (st.ok() && !batch.events.empty()) {
    st = conn_->pipeline_queue(
        pg::kInsertEvents,
        {pg::Param::text(epoch), pg::Param::bytes(c.seq.bytes()),
         pg::Param::bytes(c.stream.bytes()), pg::Param::bytes(c.version.bytes()),
         pg::Param::bytes(c.type.bytes()), pg::Param::bytes(c.recorded_at.bytes()),
         pg::Param::bytes(c.actor.bytes()), pg::Param::bytes(c.command_id.bytes()),
         pg::Param::bytes(c.data.bytes()), pg::Param::bytes(c.bytes.bytes()),
         pg::Param::bytes(c.hash.bytes()), pg::Param::bytes(c.prev_hash.bytes())});
  }
  if (st.ok() && !batch.idempotency.empty()) {
    st = conn_->pipeline_queue(pg::kInsertIdempotency,
                               {pg::Param::bytes(c.key.bytes()), pg::Param::bytes(c.record.bytes()),
                                pg::Param::bytes(c.kept_ms.bytes()), pg::Param::text(to)});
  }
  std::string sqlstate;
  if (st.ok()) {
    st = conn_->pipeline_sync(&sqlstate);
  } else {
    // Queued statements must not commit: the connection goes, and with it
    // the open transaction.
    conn_.reset();
  }
  if (!st.ok()) {
    if (sqlstate == pg::kFencedState) {
      return Status::Unavailable("fenced: another node leads now (" + st.message() + ")");
    }
    if (conn_ == nullptr || conn_->broken()) {
      conn_.reset();
      return Status::InDoubt("the commit was not confirmed: " + st.message());
    }
    return Status::Unavailable(st.message());
  }
  *head_seq = to_seq;
  *head_hash = to_hash;
  return Status::Ok();
}

Status PgStore::purge_idempotency(int64_t before_ms) {
  if (epoch_led()) {
    // Its own connection: a long delete must not hold the writer's.
    std::unique_ptr<pg::Connection> c;
    Status st = pg::Connection::open(dsn_, timeout_ms_ * 6, &c);
    if (st.ok()) st = pg::prepare_statements(*c);
    if (st.ok()) {
      const std::string ms = std::to_string(before_ms);
      st = c->query_prepared(pg::kPurgeIdempotency, {pg::Param::text(ms)});
    }
    if (!st.ok()) return st;
  }
  return ForwardingStore::purge_idempotency(before_ms);
}

}  // namespace runledger
