// The engine's group commit: the sequencer hands each decided batch to the
// writer thread, which appends it with one synced write and then releases
// its replies, while the sequencer decides the next batch. At most one batch
// is with the writer; the sequencer settles it (waits for it, evicts what it
// finished, or rebuilds after its failure) before handing over the next.
#include <algorithm>
#include <chrono>

#include "engine/engine.h"
#include "engine/engine_batch.h"
#include "engine/entities.h"
#include "engine/log.h"
#include "projections/snapshot.h"

namespace runledger {

// Whether `b` carries a snapshot of the State along: after enough events
// since the last one (`events_since`, counting b's once it is closed), in
// proportion to the live entities (EngineOptions).
bool Engine::snapshot_due(const Batch& b, uint64_t events_since) const {
  const uint64_t live =
      state_.jobs.by_id.size() + state_.connectors.by_id.size() + state_.holds.by_id.size();
  return !b.out.events.empty() &&
         events_since >= std::max(options_.snapshot_every_events,
                                  options_.snapshot_events_per_live_entity * live);
}

// The sequencer, or the writer in take_open_batch.
void Engine::commit(std::unique_ptr<Batch> b) {
  if (b->apply_failed) {
    settle_write(nullptr);
    Status why = Status::Invalid("a command failed while being applied");
    mark_write_failed(why);
    refuse_batch(b->requests, "the write failed and nothing was changed: " + why.ToString());
    rebuild();
    return;
  }
  if (!settle_write(b.get())) return;
  if (snapshot_due(*b, events_since_snapshot_)) {
    // Live entities only: what this batch finished leaves memory once the
    // batch is durable, as usual. The writer stores it after the batch.
    std::string buffer;
    {
      MutexLock lk(spare_mu_);
      buffer = std::move(spare_snapshot_);
    }
    encode_snapshot(state_, &buffer);
    b->snapshot = std::move(buffer);
    events_since_snapshot_ = 0;
  }
  writing_finished_ = std::move(b->finished);
  finished_counts_.hand_over(b->finished_counts);
  unwritten_idempotency_.hand_over();
  {
    MutexLock lk(mu_);
    writer_busy_ = true;
    open_requests_ = 0;  // the open batch is the next one now
  }
  writer_->hand(std::move(b));
}

// Waits until the writer has no batch. When the last one
// failed, the commands of `next` (decided on top of it) are refused too and
// the State is rebuilt from the log; returns false then. The plain reads of
// `next` are read again from the rebuilt State, which holds only what is
// durable: reads go on while writes fail (a database that stopped answering
// a cluster's leader), rather than failing with the write before them.
bool Engine::settle_write(Batch* next) {
  const bool failed = writer_->settle();
  unwritten_idempotency_.writer_settled();
  if (failed) {
    writing_finished_.clear();
    finished_counts_.writer_failed();
    const std::string why = "the write before it failed and nothing of it was changed";
    std::deque<Pending> reads;
    if (next != nullptr) {
      reads = take_plain_reads(next->requests);
      refuse_batch(next->requests, why);
    }
    answer_reads_again(reads, rebuild(), why);
    return false;
  }
  evict_after_durable(writing_finished_, next);
  writing_finished_.clear();
  finished_counts_.writer_succeeded();
  return true;
}

// Settles a batch the writer is done with, if any, so
// that what comes next is decided on a State that knows its outcome.
// `next` was decided on top of it; false when it was refused because the
// write failed.
bool Engine::settle_if_written(Batch* next) {
  if (writer_->busy()) return true;
  sort_touched(*next);  // for evict_after_durable
  return settle_write(next);
}

// Streams that `next` touched stay: its own list has
// them if they are still finished after it.
void Engine::evict_after_durable(const std::vector<std::string>& streams, const Batch* next) {
  for (const auto& stream : streams) {
    if (next != nullptr && std::binary_search(next->touched.begin(), next->touched.end(), stream)) {
      continue;
    }
    evict_if_finished(state_, stream);
  }
}

void Engine::refuse_batch(std::deque<Pending>& batch, const std::string& why) {
  for (auto& p : batch) {
    metrics_.command(p.type, "unavailable", 0);
    p.done(Reply::error(503, "unavailable", why));
  }
}

std::deque<Engine::Pending> Engine::take_plain_reads(std::deque<Pending>& batch) {
  std::deque<Pending> reads;
  std::deque<Pending> rest;
  for (auto& p : batch) {
    const Request& r = p.req;
    const bool plain_read = !r.command && !r.replica && !r.fixed_reply && r.idempotency_key.empty();
    (plain_read ? reads : rest).push_back(std::move(p));
  }
  batch = std::move(rest);
  return reads;
}

void Engine::answer_reads_again(std::deque<Pending>& reads, bool rebuilt, const std::string& why) {
  if (!rebuilt) return refuse_batch(reads, why);
  const auto now = std::chrono::steady_clock::now();
  for (auto& p : reads) {
    apply_read(p);
    metrics_.command(p.type, p.outcome,
                     std::chrono::duration<double, std::milli>(now - p.submitted).count());
    p.done(std::move(p.reply));
  }
}

void Engine::mark_write_failed(const Status& st) {
  metrics_.write_failure();
  {
    MutexLock lk(mu_);
    unavailable_ = "the last write failed (" + st.ToString() + "); rebuilding from the log";
  }
  writable_ = false;
}

// with the writer idle.
bool Engine::rebuild() {
  State fresh;
  LoadReport report;
  Status st = load_state(*store_, LoadOptions{}, &fresh, &report);
  if (!st.ok()) {
    MutexLock lk(mu_);
    unavailable_ = "the state could not be rebuilt from the log: " + st.ToString();
    return false;
  }
  view_index::FinishedCounts counts{};
  if (Status c = view_index::read_counts(*store_, &counts); !c.ok()) {
    MutexLock lk(mu_);
    unavailable_ = "the counts of finished jobs could not be read: " + c.ToString();
    return false;
  }
  state_ = std::move(fresh);
  finished_counts_.reset(counts);
  events_since_snapshot_ = report.replayed;
  writing_finished_.clear();
  unwritten_idempotency_.writer_settled();
  MutexLock lk(mu_);
  unavailable_.clear();
  writable_ = !options_.read_only && !refusal_;
  return true;
}

// Writer thread. A snapshot that cannot be stored costs a longer fold at the
// next start, nothing else: the log holds every event.
void Engine::store_snapshot(uint64_t seq, std::string snapshot) {
  if (Status st = store_->put_snapshot(snapshot); !st.ok()) {
    log::warn("the projection snapshot at seq {} was not stored: {}", seq, st.ToString());
  }
  MutexLock lk(spare_mu_);
  spare_snapshot_ = std::move(snapshot);
}

// Writer thread, just after a write succeeded. While the sequencer sleeps
// the open batch waits for the writer alone: the writer closes it and hands
// it over to itself, so the next fsync starts without two thread wake-ups
// in between (waking the sequencer, the sequencer waking the writer), each
// of which waits for a free core on a busy machine. Returns whether it did;
// the writer is busy again then. A batch that failed half-way, or one that
// carries a snapshot (long to encode, and the replies of the batch just
// written would wait for it), is left to the sequencer.
bool Engine::take_open_batch() {
  if (!state_mu_.try_lock()) return false;  // the sequencer is awake: it hands over
  MutexLock state_lk(state_mu_, std::adopt_lock);
  if (open_ == nullptr || open_->requests.empty() || open_->apply_failed) return false;
  // The write just ended well (the only call), so settling cannot refuse.
  settle_if_written(open_.get());
  if (snapshot_due(*open_, events_since_snapshot_ + open_->out.events.size())) return false;
  hand_over();
  metrics_.writer_hand_over();
  return true;
}

// Writer thread, once settle_write() can see how the write of `unit` ended
// (a failure was marked before: mark_write_failed).
void Engine::on_written(std::unique_ptr<WriteUnit> unit, const Status& outcome) {
  std::unique_ptr<Batch> b(static_cast<Batch*>(unit.release()));
  if (outcome.ok() && !b->out.empty()) metrics_.batch(b->requests.size(), b->out.events.size());
  if (!(outcome.ok() && take_open_batch())) {
    {
      MutexLock lk(mu_);
      writer_busy_ = false;
    }
    cv_.notify_all();
  }
  // The sequencer decides on meanwhile; the replies wait for the snapshot,
  // so whoever got one can find it stored.
  if (outcome.ok() && b->snapshot) {
    store_snapshot(b->out.events.back().seq, std::move(*b->snapshot));
  }
  if (!outcome.ok()) {
    refuse_batch(b->requests,
                 outcome.code() == Status::Code::kInDoubt
                     ? "the write may or may not have been committed: " + outcome.ToString() +
                           "; a retry with the same Idempotency-Key tells which"
                     : "the write failed and nothing was changed: " + outcome.ToString());
    return;
  }
  auto now = std::chrono::steady_clock::now();
  for (auto& p : b->requests) {
    double ms = std::chrono::duration<double, std::milli>(now - p.submitted).count();
    metrics_.command(p.type, p.outcome, ms);
    p.done(std::move(p.reply));
  }
}

}  // namespace runledger
