#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <random>

#include "base/assert.h"
#include "base/sha256.h"
#include "base/thread_name.h"
#include "engine/due_timer.h"
#include "engine/engine_batch.h"
#include "engine/entities.h"
#include "engine/idempotency.h"
#include "engine/idempotency_purge.h"
#include "engine/log.h"
#include "engine/view_index.h"
#include "projections/snapshot.h"

namespace runledger {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Random ids for entities the engine creates itself (holds on expiry,
// scheduled syncs) and for command ids. Used by the sequencer thread only.
class RandomIds final : public IdSource {
 public:
  RandomIds() : rng_(std::random_device{}()) {}
  // "<prefix>-<16 hex digits>", without fmt: one is made for every command,
  // and formatting it was a percent of the sequencer's time.
  std::string next_id(std::string_view prefix) override {
    uint8_t bytes[sizeof(uint64_t)];
    uint64_t v = rng_();
    for (size_t i = sizeof bytes; i > 0; v >>= 8) bytes[--i] = static_cast<uint8_t>(v);
    std::string id;
    id.reserve(prefix.size() + 1 + 2 * sizeof bytes);
    id.append(prefix).push_back('-');
    append_hex(bytes, sizeof bytes, &id);
    return id;
  }

 private:
  std::mt19937_64 rng_;
};

const std::string kSystemActor = "system";

}  // namespace

Engine::Engine(std::shared_ptr<EventStore> store, const Clock& clock, EngineOptions options)
    : store_(std::move(store)),
      clock_(clock),
      options_(std::move(options)),
      ids_(std::make_unique<RandomIds>()) {}

Status Engine::load_at_open() {
  refusal_ = options_.refuse_writes;
  LoadOptions lo;
  lo.tolerate_damage = options_.read_only;
  // The fold reads the snapshot and the tail only; the events before them
  // are checked meanwhile, on the other core, so that a damaged log stops
  // the start wherever the damage lies (a read-only start serves it anyway).
  std::future<Status> checksums;
  if (!options_.read_only) {
    checksums =
        std::async(std::launch::async, [store = store_] { return store->verify_log_checksums(); });
  }
  Status st = load_state(*store_, lo, &state_, &load_report_);
  if (checksums.valid()) {
    if (Status c = checksums.get(); !c.ok()) return c;
  }
  if (!st.ok()) return st;
  if (load_report_.damage.ok()) load_report_.damage = store_->open_damage();
  // What was folded from the tail is not in any snapshot yet.
  events_since_snapshot_ = load_report_.replayed;
  metrics_.replayed(load_report_.replayed, load_report_.seconds);
  if (refusal_) writable_ = false;
  if (options_.read_only) {
    writable_ = false;
    unavailable_ = load_report_.damage.ok()
                       ? "started read-only (--read-only)"
                       : "started read-only on a damaged log: " + load_report_.damage.ToString();
  }
  if (!options_.read_only) {
    // Once per store written before the index of stored views existed.
    size_t indexed = 0;
    if (Status ix = view_index::build(*store_, &indexed); !ix.ok()) return ix;
    if (indexed > 0) log::info("indexed the stored views of {} finished entities", indexed);
  }
  view_index::FinishedCounts stored{};
  if (Status c = view_index::read_counts(*store_, &stored); !c.ok()) return c;
  finished_counts_.reset(stored);
  if (!options_.read_only) {
    purge_ = std::make_unique<IdempotencyPurge>(*store_, options_.idempotency_keep_s * 1000,
                                                options_.idempotency_purge_every_s * 1000);
  }
  return Status::Ok();
}

Status Engine::open(std::shared_ptr<EventStore> store, const Clock& clock, EngineOptions options,
                    std::unique_ptr<Engine>* out) {
  std::unique_ptr<Engine> e(new Engine(std::move(store), clock, std::move(options)));
  {
    // No other thread runs yet; the locks are taken for the analysis'
    // sake, and cost nothing.
    MutexLock state_lk(e->state_mu_);
    MutexLock lk(e->mu_);
    if (Status st = e->load_at_open(); !st.ok()) return st;
  }
  BatchWriter::Hooks hooks;
  hooks.failed = [raw = e.get()](const Status& why) { raw->mark_write_failed(why); };
  hooks.written = [raw = e.get()](std::unique_ptr<WriteUnit> unit, const Status& outcome) {
    raw->on_written(std::move(unit), outcome);
  };
  e->writer_ = std::make_unique<BatchWriter>(*e->store_, std::move(hooks));
  e->sequencer_ = std::thread([raw = e.get()] {
    name_this_thread("rl-sequencer");
    raw->run();
  });
  if (e->options_.timers && !e->options_.read_only) {
    e->timer_ = std::make_unique<DueTimer>(e->clock_, [raw = e.get()] { raw->tick(); });
  }
  *out = std::move(e);
  return Status::Ok();
}

Engine::~Engine() { shutdown(); }

std::string Engine::unavailable_reason() const {
  MutexLock lk(mu_);
  if (stopping_) return "shutting down";
  if (unavailable_.empty() && refusal_) {
    auto j = nlohmann::json::parse(refusal_->body, nullptr, false);
    if (j.is_object() && j.contains("error") && j["error"].is_string()) {
      return j["error"].get<std::string>();
    }
  }
  return unavailable_;
}

void Engine::refuse_writes(Reply refusal) {
  MutexLock lk(mu_);
  refusal_ = std::move(refusal);
  writable_ = false;
}

void Engine::accept_writes() {
  MutexLock lk(mu_);
  refusal_.reset();
  // A failed write's rebuild that has not succeeded still keeps it shut.
  writable_ = !options_.read_only && unavailable_.empty();
}

Reply Engine::unwritable_reply() const {
  {
    MutexLock lk(mu_);
    if (refusal_ && unavailable_.empty()) return *refusal_;
  }
  return Reply::error(503, "unavailable", "the engine cannot write: " + unavailable_reason());
}

Reply Engine::execute(Request request) {
  std::promise<Reply> promise;
  auto reply = promise.get_future();
  // The promise outlives the call: this thread waits for it below.
  submit(std::move(request), [&promise](Reply r) { promise.set_value(std::move(r)); });
  return reply.get();
}

void Engine::submit(Request request, Completion done) {
  UniqueLock lk(mu_);
  if (!stopping_ && queue_.size() < options_.queue_requests_max) {
    Pending& p = queue_.emplace_back();
    p.req = std::move(request);
    p.submitted = SteadyClock::now();
    p.done = std::move(done);
    const bool first = queue_.size() == 1;
    lk.unlock();
    // Only for the first request in the queue: the sequencer waits only on
    // an empty queue, and one that is not empty it takes whole, so it was
    // woken already for the others.
    if (first) cv_.notify_one();
    return;
  }
  const bool stopping = stopping_;
  lk.unlock();
  done(stopping ? Reply::error(503, "unavailable", "the engine is shutting down")
                : Reply::error(503, "overloaded", "the engine's queue is full; retry later"));
}

bool Engine::sequencer_may_take() const {
  return !queue_.empty() || (open_requests_ > 0 && !writer_busy_.load(std::memory_order_relaxed));
}

Reply Engine::read(Renderer render) {
  Request r;
  r.render = std::move(render);
  return execute(std::move(r));
}

void Engine::tick() {
  if (!writable()) return;
  if (purge_) purge_->maybe_start(clock_.now_ms());
  for (Command c : {Command(jobs::ExpireLeases{}), Command(connectors::RunSchedule{})}) {
    Request r;
    r.command = std::move(c);
    r.actor = kSystemActor;
    r.render = [](const State&, const Decision*) { return Reply{200, "{}"}; };
    execute(std::move(r)).body.clear();
  }
}

void Engine::record_schedule_gaps() {
  if (!writable()) return;
  Request r;
  r.command = connectors::RecordScheduleGaps{};
  r.actor = kSystemActor;
  r.render = [](const State&, const Decision*) { return Reply{200, "{}"}; };
  execute(std::move(r)).body.clear();
}

Status Engine::finish_idempotency_purge() { return purge_ ? purge_->wait() : Status::Ok(); }

void Engine::shutdown() {
  {
    MutexLock lk(mu_);
    if (stopping_ && !sequencer_.joinable()) return;
    stopping_ = true;
  }
  if (timer_) timer_->stop();
  cv_.notify_all();
  if (sequencer_.joinable()) sequencer_.join();
  if (purge_) purge_->wait().IgnoreError();
  // A final snapshot makes the next start fold only what came after it.
  MutexLock state_lk(state_mu_);
  if (writable() && events_since_snapshot_ > 0) {
    AppendBatch b;
    b.snapshot = encode_snapshot(state_);
    store_->append(b).IgnoreError();  // best effort: the log alone is enough to restart
  }
}

// The sequencer decides requests as they come, into the open batch, while
// the writer writes the batch before it; the open batch goes to the writer
// as soon as the writer is free (or the batch is full). So a batch is still
// everything that came during the last write, one fsync for all of them,
// but deciding it is done by the time the write before it ends, and the
// writer starts the next fsync at once instead of waiting for the sequencer.
//
// The sequencer holds state_mu_ while it is awake; asleep, it leaves the
// open batch to the writer, which then hands it over to itself the moment
// its write ends (see take_open_batch) without waking this thread.
void Engine::run() {
  UniqueLock state_lk(state_mu_);
  open_ = std::make_unique<Batch>();
  open_batch();
  for (;;) {
    std::deque<Pending> fresh;
    bool stopping = false;
    {
      UniqueLock lk(mu_);
      open_requests_ = open_->requests.size();
      if (!stopping_ && !sequencer_may_take()) {
        state_lk.unlock();
        while (!stopping_ && !sequencer_may_take()) cv_.wait(lk.native());
        // state_mu_ before mu_, as the writer takes them.
        lk.unlock();
        state_lk.lock();
        lk.lock();
      }
      stopping = stopping_;
      const size_t room = options_.batch_requests_max - open_->requests.size();
      if (queue_.size() <= room) {
        fresh.swap(queue_);  // the usual case: no request moved here
      } else {
        for (size_t i = 0; i < room; ++i) {
          fresh.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
      }
      if (stopping && fresh.empty() && open_->requests.empty()) break;  // all decided
    }
    // How the write before ended is learnt before deciding on top of it: a
    // request sent after a 503 is decided on the rebuilt State. The writer
    // marks itself done before it replies, so that is seen here.
    if (!settle_if_written(open_.get())) {
      open_ = std::make_unique<Batch>();  // refused with the failed write
      open_batch();
    }
    for (auto& p : fresh) {
      Pending& taken = open_->requests.emplace_back(std::move(p));
      // After a command failed half-way the State must be rebuilt: the rest
      // of the batch is refused with it, undecided.
      if (!open_->apply_failed && !apply_request(taken, *open_)) open_->apply_failed = true;
      // The writer is done while requests are still being decided: it gets
      // what is decided so far at once rather than wait for the rest (a
      // thousand requests take milliseconds), and the rest opens the next
      // batch.
      if (!open_->apply_failed && !writer_busy_.load(std::memory_order_acquire)) hand_over();
    }
    if (open_->requests.empty()) continue;
    if (!writer_busy_.load(std::memory_order_acquire) || stopping || open_->apply_failed ||
        open_->requests.size() >= options_.batch_requests_max) {
      hand_over();
    }
  }
  settle_write(nullptr);  // the last batch: durable, and what it finished leaves memory
  state_lk.unlock();
  writer_->stop();
}

// Closes the open batch, gives it to the writer and opens the next.
void Engine::hand_over() {
  if (!open_->apply_failed) close_batch(*open_);
  commit(std::move(open_));
  arm_timer();
  open_ = std::make_unique<Batch>();
  open_batch();
}

void Engine::open_batch() {
  batch_versions_.clear();
  unwritten_idempotency_.drop_deciding();
}

void Engine::sort_touched(Batch& b) {
  std::sort(b.touched.begin(), b.touched.end());
  b.touched.erase(std::unique(b.touched.begin(), b.touched.end()), b.touched.end());
}

// Once every request of `b` is decided (none failed half-way: such a batch
// is refused whole and the State rebuilt, see commit()).
void Engine::close_batch(Batch& b) {
  sort_touched(b);
  view_index::FinishedCounts& decided = finished_counts_.decided();
  const view_index::FinishedCounts before = decided;
  for (const auto& stream : b.touched) {
    auto reopened = b.reopened.find(stream);
    view_index::add_view_writes(state_, stream,
                                reopened == b.reopened.end() ? nullptr : &reopened->second,
                                &b.out.views, &decided);
    if (is_finished(state_, stream)) b.finished.push_back(stream);
  }
  // A command refused on a finished entity loaded it from disk without
  // touching it: nothing of it waits to be written, so it may leave at once.
  for (const auto& stream : b.hydrated) {
    if (!std::binary_search(b.touched.begin(), b.touched.end(), stream)) {
      evict_if_finished(state_, stream);
    }
  }
  if (decided != before) {
    view_index::add_count_writes(decided, &before, &b.out.views);
    b.finished_counts = decided;
  }
  events_since_snapshot_ += b.out.events.size();
}

bool Engine::find_idempotency(const std::string& key, std::string* record, bool* legacy) {
  const std::string record_key = idempotency_record_key(key);
  *legacy = false;
  if (const std::string* unwritten = unwritten_idempotency_.find(record_key)) {
    *record = *unwritten;
    return true;
  }
  if (store_->get_idempotency(record_key, record).ok()) return true;
  *legacy = store_->get_idempotency(key, record).ok();
  return *legacy;
}

// A read-only engine keeps no key: it writes nothing, and a refusal it
// answers must not become a 503 through a write that cannot happen. Nor
// does one that cannot write now (a standby): what it keeps would exist on
// this node alone.
void Engine::remember_reply(const Request& r, const Reply& reply, Batch& b) {
  if (r.idempotency_key.empty() || reply.status >= 500 || options_.read_only) return;
  if (!writable()) return;
  if (r.tried_again_on_no_content && reply.status == 204) return;
  std::string rec =
      encode_idempotency(clock_.now_ms(), r.fingerprint, reply, r.reply_secret, r.idempotency_key);
  std::string record_key = idempotency_record_key(r.idempotency_key);
  unwritten_idempotency_.keep(record_key, rec);
  b.out.idempotency.emplace_back(std::move(record_key), std::move(rec));
}

bool Engine::apply_request(Pending& p, Batch& b) {
  Request& r = p.req;
  if (answered_as_kept(p)) return true;
  if (r.fixed_reply) {
    p.type = "invalid_request";
    p.outcome = "refused";
    p.reply = *r.fixed_reply;
    remember_reply(r, p.reply, b);
    return true;
  }
  if (r.replica) return apply_replica(p, b);
  if (!r.command) {
    apply_read(p);
    return true;
  }
  return apply_command(p, b);
}

bool Engine::answered_as_kept(Pending& p) {
  const Request& r = p.req;
  if (r.idempotency_key.empty()) return false;
  std::string record;
  bool legacy = false;
  if (!find_idempotency(r.idempotency_key, &record, &legacy)) return false;
  auto rec = decode_idempotency(record, r.idempotency_key);
  p.type = "idempotent_replay";
  const bool same = rec && (legacy ? r.legacy_fingerprint == rec->fingerprint
                                   : rec->fingerprint == r.fingerprint);
  if (same) {
    p.reply = rec->reply;
  } else {
    // Another request, or another caller's: nothing of the kept reply is told.
    p.outcome = "refused";
    p.reply = Reply::error(409, "idempotency_key_reused",
                           "Idempotency-Key was already used for a different request");
  }
  return true;
}

void Engine::apply_read(Pending& p) {
  // A read changes nothing, so a renderer that throws only fails its own reply.
  try {
    p.reply = p.req.render(state_, nullptr);
  } catch (const std::exception& e) {
    p.outcome = "error";
    p.reply = Reply::error(500, "internal_error", std::string("the read failed: ") + e.what());
  }
  p.reply.add_seq(state_.last_seq);
}

bool Engine::refused_undecided(Pending& p, const Command& cmd) {
  if (!writable()) {
    p.outcome = "unavailable";
    p.reply = unwritable_reply();
    return true;
  }
  // Live jobs are held in memory: past their bound a new job waits (503)
  // for some to finish, rather than memory growing without one. An enqueue
  // of a job already held is answered as always.
  if (const auto* enqueue = std::get_if<jobs::Enqueue>(&cmd);
      enqueue != nullptr && state_.jobs.by_id.size() >= options_.live_jobs_max &&
      state_.jobs.by_id.find(enqueue->id) == state_.jobs.by_id.end()) {
    p.outcome = "unavailable";
    p.reply = Reply::error(503, "overloaded",
                           "the server holds its most live jobs (" +
                               std::to_string(options_.live_jobs_max) +
                               ", --live-jobs-max); retry once some have finished");
    return true;
  }
  return false;
}

bool Engine::load_named_streams(Pending& p, const Command& cmd, Batch& b) {
  for (const auto& stream : streams_named(cmd)) {
    if (in_memory(state_, stream)) continue;
    bool stored_none = false;
    Status st = hydrate(*store_, state_, stream, 0, &stored_none);
    if (!st.ok()) {
      p.outcome = "unavailable";
      p.reply = Reply::error(503, "unavailable", "reading the log failed: " + st.ToString());
      return false;
    }
    if (stored_none) {
      // A new stream (an enqueue's job): its version is known, and the
      // store need not be asked again when its first event is appended.
      batch_versions_.try_emplace(stream, 0);
    } else if (in_memory(state_, stream)) {
      b.hydrated.push_back(stream);
    }
  }
  return true;
}

bool Engine::apply_command(Pending& p, Batch& b) {
  const Request& r = p.req;
  const Command& cmd = *r.command;
  p.type = command_name(cmd);
  if (refused_undecided(p, cmd) || !load_named_streams(p, cmd, b)) return true;
  Context ctx;
  ctx.now_ms = clock_.now_ms();
  ctx.actor = r.actor;
  ctx.policy = &options_.policy;
  ctx.ids = ids_.get();
  Decision d;
  try {
    d = decide(state_, cmd, ctx);
  } catch (const std::exception& e) {
    p.outcome = "error";
    p.reply = Reply::error(500, "internal_error", std::string("the command failed: ") + e.what());
    return true;
  }
  try {
    Status st = append_decision(d, r.actor, ids_->next_id("c"), ctx.now_ms, b);
    if (!st.ok()) return false;
    p.reply = r.render(state_, &d);
  } catch (const std::exception&) {
    return false;
  }
  p.outcome = d.rejection ? "refused" : "ok";
  if (std::holds_alternative<jobs::ExpireLeases>(cmd)) {
    uint64_t n = 0;
    for (const auto& e : d.events) n += e.payload.type == fb::Payload::LeaseExpired;
    metrics_.lease_expiries(n);
  }
  remember_reply(r, p.reply, b);
  return true;
}

// Folds events the log already holds, exactly as append_decision folds the
// ones it makes: entities that left memory come back first, a finished one
// that comes back loses its stored view, and close_batch() writes the views
// of what they finish. Nothing is folded unless all of them continue the log.
bool Engine::apply_replica(Pending& p, Batch& b) {
  const Replica& replica = *p.req.replica;
  p.type = "replica";
  uint64_t seq = state_.last_seq;
  Hash prev = state_.last_hash;
  // Each event's hash, worked out once: it checks the next one's prev_hash
  // and becomes the State's last hash.
  std::vector<Hash> hashes;
  hashes.reserve(replica.events.size());
  for (const auto& ev : replica.events) {
    const fb::Event* e = nullptr;
    Status st = decode_event(ev.bytes, &e);
    if (st.ok() && (e->seq() != seq + 1 || e->prev_hash() == nullptr ||
                    e->prev_hash()->size() != prev.size() ||
                    !std::equal(prev.begin(), prev.end(), e->prev_hash()->begin()))) {
      st = Status::Conflict("event " + std::to_string(e->seq()) + " does not continue the log at " +
                            std::to_string(seq));
    }
    if (!st.ok()) {
      p.outcome = "refused";
      p.reply = Reply::error(409, "conflict", st.ToString(), {{"last_seq", state_.last_seq}});
      return true;
    }
    seq = e->seq();
    prev = sha256(ev.bytes);
    hashes.push_back(prev);
  }
  for (size_t i = 0; i < replica.events.size(); ++i) {
    const EncodedEvent& ev = replica.events[i];
    if (!in_memory(state_, ev.stream)) {
      bool stored_none = false;
      if (Status st = hydrate(*store_, state_, ev.stream, 0, &stored_none); !st.ok()) return false;
      if (!stored_none && in_memory(state_, ev.stream)) b.hydrated.push_back(ev.stream);
    }
    if (batch_versions_.find(ev.stream) == batch_versions_.end() &&
        entity_status(state_, ev.stream).finished_in_memory()) {
      b.reopened.emplace(ev.stream, view_index::entries_of(state_, ev.stream));
    }
    const fb::Event* e = nullptr;
    if (!decode_event(ev.bytes, &e).ok()) return false;
    evolve(state_, *e);
    state_.last_hash = hashes[i];
    batch_versions_[ev.stream] = ev.stream_version;
    b.touched.push_back(ev.stream);
    b.out.events.push_back(ev);
  }
  for (const auto& [key, record] : replica.idempotency) {
    unwritten_idempotency_.keep(key, record);
    b.out.idempotency.emplace_back(key, record);
  }
  p.reply = Reply::json(200, {{"last_seq", state_.last_seq}});
  return true;
}

Status Engine::append_decision(const Decision& d, const std::string& actor,
                               const std::string& command_id, int64_t now_ms, Batch& b) {
  for (const auto& ne : d.events) {
    RL_ASSERT(names_an_entity(ne.stream), "a decider named a stream outside the stream grammar");
    uint32_t current = 0;
    auto it = batch_versions_.find(ne.stream);
    if (it != batch_versions_.end()) {
      current = it->second;
    } else if (const EntityStatus entity = entity_status(state_, ne.stream);
               (current = entity.version) != 0) {
      // First touched in this batch: a finished entity coming back loses
      // the view the store keeps for it (see close_batch).
      if (entity.finished) {
        b.reopened.emplace(ne.stream, view_index::entries_of(state_, ne.stream));
      }
    } else {
      Status st = store_->stream_version(ne.stream, &current);
      if (!st.ok()) return st;
    }
    EventDraft draft;
    draft.seq = state_.last_seq + 1;
    draft.stream = ne.stream;
    draft.stream_version = current + 1;
    draft.recorded_at_ms = now_ms;
    draft.actor = actor;
    draft.command_id = command_id;
    draft.prev_hash = state_.last_hash;
    draft.payload = &ne.payload;
    EncodedEvent enc;
    encode_event(draft, &enc.bytes);
    const fb::Event* event = nullptr;
    // Assert before writing: what we append must read back.
    Status st = decode_event(enc.bytes, &event);
    if (!st.ok()) return st;
    evolve(state_, *event);
    RL_ASSERT(state_.last_seq == draft.seq, "the fold did not take the appended event's seq");
    state_.last_hash = sha256(enc.bytes);
    enc.seq = draft.seq;
    enc.stream = ne.stream;
    enc.stream_version = draft.stream_version;
    batch_versions_[ne.stream] = draft.stream_version;
    b.touched.push_back(ne.stream);
    b.out.events.push_back(std::move(enc));
  }
  return Status::Ok();
}

void Engine::arm_timer() {
  if (!timer_) return;
  int64_t a = jobs::next_due_ms(state_);
  int64_t b = connectors::next_due_ms(state_);
  int64_t due = a == 0 ? b : (b == 0 ? a : std::min(a, b));
  timer_->arm(due);
}

}  // namespace runledger
