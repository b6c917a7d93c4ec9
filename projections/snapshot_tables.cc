// Entities to and from snapshot tables: see snapshot_tables.h.
#include "projections/snapshot_tables.h"

#include <string>
#include <vector>

#include "projections/connector_internal.h"

namespace runledger::snapshot_tables {

namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using StringVector = flatbuffers::Vector<Offset<flatbuffers::String>>;

// Empty strings and lists are left out: most optional fields of a live
// entity are empty, and an absent field costs nothing to write or read.
Offset<flatbuffers::String> write_text(FlatBufferBuilder& b, const std::string& s) {
  return s.empty() ? Offset<flatbuffers::String>() : b.CreateString(s);
}

Offset<StringVector> write_texts(FlatBufferBuilder& b, const std::vector<std::string>& list) {
  return list.empty() ? Offset<StringVector>() : b.CreateVectorOfStrings(list);
}

std::string read_text(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

std::vector<std::string> read_texts(const StringVector* list) {
  std::vector<std::string> out;
  if (!list) return out;
  out.reserve(list->size());
  for (const flatbuffers::String* s : *list) out.push_back(read_text(s));
  return out;
}

// The enums are stored as their numeric values; one past the last is not a
// state any binary wrote.
template <typename E>
E read_enum(uint8_t value, E last, const char* what) {
  if (value > static_cast<uint8_t>(last)) {
    throw std::invalid_argument(std::string("snapshot: unknown ") + what + " " +
                                std::to_string(value));
  }
  return static_cast<E>(value);
}

Offset<snap::Step> write_step(FlatBufferBuilder& b, const jobs::Step& st) {
  return snap::CreateStep(b, write_text(b, st.name), static_cast<uint8_t>(st.state),
                          st.started_at_ms, st.finished_at_ms, write_text(b, st.output),
                          write_text(b, st.error), st.reused_from);
}

jobs::Step read_step(const snap::Step& t) {
  jobs::Step st;
  st.name = read_text(t.name());
  st.state = read_enum(t.state(), jobs::StepState::kReused, "step state");
  st.started_at_ms = t.started_at_ms();
  st.finished_at_ms = t.finished_at_ms();
  st.output = read_text(t.output());
  st.error = read_text(t.error());
  st.reused_from = t.reused_from();
  return st;
}

Offset<snap::Attempt> write_attempt(FlatBufferBuilder& b, const jobs::Attempt& a) {
  Offset<flatbuffers::Vector<Offset<snap::Step>>> steps;
  if (!a.steps.empty()) {
    std::vector<Offset<snap::Step>> list;
    list.reserve(a.steps.size());
    for (const jobs::Step& st : a.steps) list.push_back(write_step(b, st));
    steps = b.CreateVector(list);
  }
  return snap::CreateAttempt(
      b, a.number, static_cast<uint8_t>(a.state), a.created_at_ms, a.started_at_ms,
      a.finished_at_ms, a.not_before_ms, write_text(b, a.error), steps, write_text(b, a.worker),
      write_text(b, a.lease_token_sha256), a.lease_s, a.lease_expires_at_ms,
      write_text(b, a.execution_handle), a.cancel_requested, write_text(b, a.cancel_reason),
      write_text(b, a.cancel_requested_by), write_text(b, a.last_completed_step), a.cleanup_needed,
      write_text(b, a.stale_hold_id));
}

jobs::Attempt read_attempt(const snap::Attempt& t) {
  jobs::Attempt a;
  a.number = t.number();
  a.state = read_enum(t.state(), jobs::AttemptState::kYielded, "attempt state");
  a.created_at_ms = t.created_at_ms();
  a.started_at_ms = t.started_at_ms();
  a.finished_at_ms = t.finished_at_ms();
  a.not_before_ms = t.not_before_ms();
  a.error = read_text(t.error());
  if (const auto* steps = t.steps()) {
    a.steps.reserve(steps->size());
    for (const snap::Step* st : *steps) a.steps.push_back(read_step(*st));
  }
  a.worker = read_text(t.worker());
  a.lease_token_sha256 = read_text(t.lease_token_sha256());
  a.lease_s = t.lease_s();
  a.lease_expires_at_ms = t.lease_expires_at_ms();
  a.execution_handle = read_text(t.execution_handle());
  a.cancel_requested = t.cancel_requested();
  a.cancel_reason = read_text(t.cancel_reason());
  a.cancel_requested_by = read_text(t.cancel_requested_by());
  a.last_completed_step = read_text(t.last_completed_step());
  a.cleanup_needed = t.cleanup_needed();
  a.stale_hold_id = read_text(t.stale_hold_id());
  return a;
}

}  // namespace

Offset<snap::Job> write(FlatBufferBuilder& b, const jobs::Job& j) {
  std::vector<Offset<snap::Attempt>> attempts;
  attempts.reserve(j.attempts.size());
  for (const jobs::Attempt& a : j.attempts) attempts.push_back(write_attempt(b, a));
  return snap::CreateJob(b, write_text(b, j.id), write_text(b, j.kind), write_text(b, j.target),
                         write_text(b, j.input), write_texts(b, j.plan),
                         write_texts(b, j.reuse_on_rerun), j.max_attempts, j.priority,
                         j.not_before_ms, b.CreateVector(attempts), j.enqueue_seq, j.created_at_ms,
                         j.updated_at_ms, j.version);
}

jobs::Job read(const snap::Job& t) {
  jobs::Job j;
  j.id = read_text(t.id());
  j.kind = read_text(t.kind());
  j.target = read_text(t.target());
  j.input = read_text(t.input());
  j.plan = read_texts(t.plan());
  j.reuse_on_rerun = read_texts(t.reuse_on_rerun());
  j.max_attempts = t.max_attempts();
  j.priority = t.priority();
  j.not_before_ms = t.not_before_ms();
  if (const auto* attempts = t.attempts()) {
    j.attempts.reserve(attempts->size());
    for (const snap::Attempt* a : *attempts) j.attempts.push_back(read_attempt(*a));
  }
  // Job::attempt(n) and latest() rely on these.
  if (j.id.empty() || j.attempts.empty()) {
    throw std::invalid_argument("snapshot: a job needs an id and an attempt");
  }
  for (size_t i = 0; i < j.attempts.size(); ++i) {
    if (j.attempts[i].number != static_cast<int>(i + 1)) {
      throw std::invalid_argument("snapshot: job " + j.id + " has its attempts out of order");
    }
  }
  j.enqueue_seq = t.enqueue_seq();
  j.created_at_ms = t.created_at_ms();
  j.updated_at_ms = t.updated_at_ms();
  j.version = t.version();
  return j;
}

Offset<snap::Connector> write(FlatBufferBuilder& b, const connectors::Connector& c) {
  std::vector<Offset<snap::Document>> documents;
  documents.reserve(c.documents.size());
  for (const auto& [id, doc] : c.documents) {
    documents.push_back(snap::CreateDocument(b, write_text(b, id), static_cast<uint8_t>(doc.status),
                                             write_text(b, doc.error)));
  }
  std::vector<Offset<snap::EndedSync>> ended;
  ended.reserve(c.ended_syncs.size());
  for (const auto& e : c.ended_syncs) {
    ended.push_back(snap::CreateEndedSync(b, write_text(b, e.sync_id), write_text(b, e.how)));
  }
  return snap::CreateConnector(
      b, write_text(b, c.id), write_text(b, c.name), static_cast<uint8_t>(c.status),
      static_cast<uint8_t>(c.sync_status), write_text(b, c.last_error), c.last_synced_at_ms,
      c.sync_schedule_s, c.next_slot_ms, write_text(b, c.sync_id), write_text(b, c.sync_trigger),
      c.sync_started_at_ms, c.created_at_ms, c.updated_at_ms, c.version, b.CreateVector(documents),
      b.CreateVector(ended));
}

connectors::Connector read(const snap::Connector& t) {
  connectors::Connector c;
  c.id = read_text(t.id());
  if (c.id.empty()) throw std::invalid_argument("snapshot: a connector needs an id");
  c.name = read_text(t.name());
  c.status = read_enum(t.status(), connectors::Status::kDeleting, "connector status");
  c.sync_status = read_enum(t.sync_status(), connectors::SyncStatus::kRunning, "sync status");
  c.last_error = read_text(t.last_error());
  c.last_synced_at_ms = t.last_synced_at_ms();
  c.sync_schedule_s = t.sync_schedule_s();
  c.next_slot_ms = t.next_slot_ms();
  c.sync_id = read_text(t.sync_id());
  c.sync_trigger = read_text(t.sync_trigger());
  c.sync_started_at_ms = t.sync_started_at_ms();
  c.created_at_ms = t.created_at_ms();
  c.updated_at_ms = t.updated_at_ms();
  c.version = t.version();
  if (const auto* documents = t.documents()) {
    for (const snap::Document* d : *documents) {
      // Keeps document_counts in step, as the fold does.
      connectors::internal::set_document(
          c, read_text(d->id()),
          read_enum(d->status(), connectors::DocStatus::kFailed, "document status"),
          read_text(d->error()));
    }
  }
  if (const auto* ended = t.ended_syncs()) {
    c.ended_syncs.reserve(ended->size());
    for (const snap::EndedSync* e : *ended) {
      c.ended_syncs.push_back({read_text(e->sync_id()), read_text(e->how())});
    }
  }
  return c;
}

Offset<snap::Hold> write(FlatBufferBuilder& b, const holds::Hold& h) {
  return snap::CreateHold(
      b, write_text(b, h.id), write_text(b, h.target), write_text(b, h.kind), write_text(b, h.job),
      h.attempt, write_text(b, h.reason), write_text(b, h.placed_by), h.placed_at_ms, h.released,
      write_text(b, h.released_by), h.released_at_ms, write_text(b, h.release_note),
      h.execution_stopped, write_text(b, h.outcome), h.version);
}

holds::Hold read(const snap::Hold& t) {
  holds::Hold h;
  h.id = read_text(t.id());
  if (h.id.empty()) throw std::invalid_argument("snapshot: a hold needs an id");
  h.target = read_text(t.target());
  h.kind = read_text(t.kind());
  h.job = read_text(t.job());
  h.attempt = t.attempt();
  h.reason = read_text(t.reason());
  h.placed_by = read_text(t.placed_by());
  h.placed_at_ms = t.placed_at_ms();
  h.released = t.released();
  h.released_by = read_text(t.released_by());
  h.released_at_ms = t.released_at_ms();
  h.release_note = read_text(t.release_note());
  h.execution_stopped = t.execution_stopped();
  h.outcome = read_text(t.outcome());
  h.version = t.version();
  return h;
}

}  // namespace runledger::snapshot_tables
