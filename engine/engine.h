// Engine: the command pipeline. One sequencer thread decides every command
// against the State, folds the events and renders the reply.
// Everything queued while it decides forms the next batch, which it hands to
// the writer thread (engine/batch_writer.h) to group-commit as ONE
// WriteBatch with sync=true; while that fsync runs, the sequencer already
// decides the batch after it. Replies (and reads, which also run on the
// sequencer) are released by the writer only after their batch, and so
// every batch before it, is durable: nobody ever sees state a crash could
// lose.
//
// When the write ends while the sequencer sleeps, the writer hands the open
// batch over to itself instead of waking the sequencer to do it: one thread
// wake-up fewer in every cycle, which on two busy cores was a third of it.
//
// Because the batch being written is not on disk yet, the sequencer must
// not look for its records there: finished entities leave memory only once
// the batch that finished them is durable, and its idempotency records are
// looked up in memory until then.
//
// A failed write does not get retried blindly: the batch's requests get 503,
// so does the batch decided on top of it, the engine rebuilds its State from
// the log (memory never drifts from disk) and takes writes again; if the
// rebuild fails it stays refusing.
//
// Thread-safe: execute() may be called from any number of threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "engine/batch_writer.h"
#include "engine/clock.h"
#include "engine/command.h"
#include "engine/finished_count_stages.h"
#include "engine/metrics.h"
#include "engine/reply.h"
#include "engine/state_loader.h"
#include "engine/unwritten_idempotency.h"
#include "engine/view_index.h"
#include "events/event_store.h"
#include "projections/state.h"

namespace runledger {

class DueTimer;
class IdempotencyPurge;

struct EngineOptions {
  Policy policy;
  bool read_only = false;
  // Arm Asio timers for lease expiry and schedule slots. Tests with a
  // ManualClock turn this off and call tick() themselves.
  bool timers = true;
  // Write a projection snapshot after this many events since the last one,
  // and at least this many per live entity (job, connector, hold in
  // memory): a snapshot costs time in proportion to the live entities (about
  // 0.3-0.6 s of the sequencer for 100,000 live jobs), so the interval
  // grows with them and the cost per event stays bounded; a restart then
  // folds a tail of at most that many events. 0: every snapshot_every_events.
  // 100,000: a new process folds them in about 0.12-0.15 s on 2 cores, and
  // with few live entities a snapshot costs next to nothing.
  uint64_t snapshot_every_events = 100'000;
  uint64_t snapshot_events_per_live_entity = 8;
  size_t batch_requests_max = 8192;   // requests per group commit
  size_t queue_requests_max = 65536;  // queued beyond this: 503, nothing done
  // Jobs held in memory (not finished); an enqueue beyond is 503 until some
  // finish (docs/operations.md, Limits).
  size_t live_jobs_max = 1'000'000;
  // Idempotency keys are kept at least 24 h (docs/api.md); an hour of margin.
  int64_t idempotency_keep_s = 25 * 3600;
  int64_t idempotency_purge_every_s = 3600;
  // Commands are refused with this reply from the start, until
  // accept_writes(): a standby of a cluster (docs/cluster.md).
  std::optional<Reply> refuse_writes;
};

// Events and idempotency records another node decided and the log already
// holds (a standby follows the leader's log): the engine folds them as they
// are, verified to continue its log, and writes them to its store.
struct Replica {
  std::vector<EncodedEvent> events;  // ascending seq, contiguous
  std::vector<std::pair<std::string, std::string>> idempotency;
};

// Renders the reply on the sequencer thread, after the command's events
// were folded (decision is null for reads). It may read the State only.
using Renderer = std::function<Reply(const State& s, const Decision* decision)>;

// Receives a submitted request's reply once it is durable.
using Completion = std::function<void(Reply reply)>;

struct Request {
  std::optional<Command> command;  // none: a read
  Renderer render;
  std::string actor = "anonymous";
  std::string idempotency_key;  // empty: none
  Hash fingerprint{};           // of caller, method, path and body, with a key
  // What a record kept by an earlier version (under the key itself, with
  // no caller in its fingerprint) must hold to be this request's: set for
  // the anonymous caller only, as without authentication every caller is
  // one, and any other caller's retry of such a record is refused.
  std::optional<Hash> legacy_fingerprint;
  // A secret the reply may carry (a fresh lease token): its kept record
  // holds it sealed under the key, never in clear.
  std::string reply_secret;
  // A claim that waits for work (wait_s): its 204 is not kept under its
  // key, as it will be tried again, and its final 204 is kept then.
  bool tried_again_on_no_content = false;
  // A reply decided before the engine (e.g. a 422 from validation) that
  // must still be recorded under its idempotency key.
  std::optional<Reply> fixed_reply;
  // Not a command: the log's next events, decided elsewhere (see Replica).
  // 200 once they are durable; 409 when they do not continue the log.
  std::shared_ptr<const Replica> replica;
};

class Engine {
 public:
  // Loads the state (snapshot + tail; a damaged log fails unless
  // options.read_only), then starts the sequencer (and timers).
  static Status open(std::shared_ptr<EventStore> store, const Clock& clock, EngineOptions options,
                     std::unique_ptr<Engine>* out);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Runs a request through the sequencer; returns once its reply is durable.
  Reply execute(Request request);
  // The same without waiting, for callers that keep many requests in flight
  // from few threads. `done` runs on the writer thread once the reply is
  // durable, so it must be quick (it may submit() again); a request refused
  // before the queue (shutting down, queue full) gets its 503 at once on
  // the caller's thread.
  void submit(Request request, Completion done);
  // A read of the durable state on the sequencer thread.
  Reply read(Renderer render);

  // Submits the system commands for due leases and schedule slots at now.
  void tick();
  // Records missed schedule slots once, at start-up (docs/domain.md 2.5).
  void record_schedule_gaps();

  // Waits for the idempotency purge that tick() started, if any.
  Status finish_idempotency_purge();

  // Stops taking requests, finishes those in flight, writes a snapshot, joins.
  void shutdown();

  bool writable() const { return writable_.load(std::memory_order_acquire); }
  // From now on every command is answered `refusal` (nothing decided), until
  // accept_writes(); reads and replicas go on. Thread-safe.
  void refuse_writes(Reply refusal);
  void accept_writes();
  std::string unavailable_reason() const;
  const LoadReport& load_report() const { return load_report_; }
  EventStore& store() { return *store_; }
  const Clock& clock() const { return clock_; }
  const EngineOptions& options() const { return options_; }
  const Metrics& metrics() const { return metrics_; }
  // Finished jobs whose views are stored (durable), by state. Called from a
  // read()'s renderer only, which the sequencer runs holding state_mu_: the
  // analysis cannot see through the callback.
  const view_index::FinishedCounts& stored_finished_jobs() const RL_NO_THREAD_SAFETY_ANALYSIS {
    return finished_counts_.stored();
  }

 private:
  struct Pending;
  struct Batch;

  Engine(std::shared_ptr<EventStore> store, const Clock& clock, EngineOptions options);

  // What open() loads before the threads start.
  Status load_at_open() RL_REQUIRES(state_mu_, mu_);

  // The sequencer thread. What needs state_mu_ runs on it, and hand_over and
  // what it calls also on the writer in take_open_batch.
  void run() RL_EXCLUDES(state_mu_, mu_);
  void open_batch() RL_REQUIRES(state_mu_);
  void hand_over() RL_REQUIRES(state_mu_);
  static void sort_touched(Batch& b);
  void close_batch(Batch& b) RL_REQUIRES(state_mu_);
  // Decides one request into `b`; false when it failed half-way (the State
  // must then be rebuilt). The parts, in the order they are tried:
  bool apply_request(Pending& p, Batch& b) RL_REQUIRES(state_mu_);
  // the reply kept under its idempotency key (true when there was one),
  bool answered_as_kept(Pending& p) RL_REQUIRES(state_mu_);
  // a read, rendered from the State,
  void apply_read(Pending& p) RL_REQUIRES(state_mu_);
  // a command: refused undecided while the engine cannot take it (true
  // then), its entities loaded back into memory (false when that failed,
  // with the reply set), then decided, appended and rendered.
  bool refused_undecided(Pending& p, const Command& cmd) RL_REQUIRES(state_mu_);
  bool load_named_streams(Pending& p, const Command& cmd, Batch& b) RL_REQUIRES(state_mu_);
  bool apply_command(Pending& p, Batch& b) RL_REQUIRES(state_mu_);
  bool apply_replica(Pending& p, Batch& b) RL_REQUIRES(state_mu_);
  // Keeps the reply to `r` under its idempotency key, when it has one.
  void remember_reply(const Request& r, const Reply& reply, Batch& b) RL_REQUIRES(state_mu_);
  // The reply a command gets while the engine cannot write.
  Reply unwritable_reply() const RL_EXCLUDES(mu_);
  Status append_decision(const Decision& d, const std::string& actor, const std::string& command_id,
                         int64_t now_ms, Batch& b) RL_REQUIRES(state_mu_);
  // The record kept under `key`: by its record key (recent batches, then
  // the store), else under the key itself as earlier versions kept it
  // (*legacy set).
  bool find_idempotency(const std::string& key, std::string* record, bool* legacy)
      RL_REQUIRES(state_mu_);
  void arm_timer() RL_REQUIRES(state_mu_);

  // Between the sequencer and the writer (engine_commit.cc).
  void commit(std::unique_ptr<Batch> b) RL_REQUIRES(state_mu_) RL_EXCLUDES(mu_, spare_mu_);
  bool settle_write(Batch* next) RL_REQUIRES(state_mu_);
  bool settle_if_written(Batch* next) RL_REQUIRES(state_mu_);
  void evict_after_durable(const std::vector<std::string>& streams, const Batch* next)
      RL_REQUIRES(state_mu_);
  void refuse_batch(std::deque<Pending>& batch, const std::string& why);
  // Reads decided on top of a write that failed, taken out of `batch`: they
  // are read again once the State is rebuilt (answer_reads_again).
  static std::deque<Pending> take_plain_reads(std::deque<Pending>& batch);
  void answer_reads_again(std::deque<Pending>& reads, bool rebuilt, const std::string& why)
      RL_REQUIRES(state_mu_);
  void mark_write_failed(const Status& st) RL_EXCLUDES(mu_);
  // Folds the State again from the log; false when that failed (the engine
  // then refuses writes, and its State is not to be read).
  bool rebuild() RL_REQUIRES(state_mu_) RL_EXCLUDES(mu_);
  // The writer's hook once a batch's write ended (BatchWriter::Hooks).
  void on_written(std::unique_ptr<WriteUnit> unit, const Status& outcome)
      RL_EXCLUDES(state_mu_, mu_);
  bool take_open_batch() RL_EXCLUDES(state_mu_);
  bool snapshot_due(const Batch& b, uint64_t events_since) const RL_REQUIRES(state_mu_);
  void store_snapshot(uint64_t seq, std::string snapshot) RL_EXCLUDES(spare_mu_);

  std::shared_ptr<EventStore> store_;
  const Clock& clock_;
  EngineOptions options_;
  Metrics metrics_;
  // Held by whoever decides or hands over: the sequencer while it is awake,
  // the writer while it takes the open batch (take_open_batch).
  Mutex state_mu_ RL_ACQUIRED_BEFORE(mu_, spare_mu_);
  State state_ RL_GUARDED_BY(state_mu_);
  // The requests decided since the last hand-over.
  std::unique_ptr<Batch> open_ RL_GUARDED_BY(state_mu_);
  uint64_t events_since_snapshot_ RL_GUARDED_BY(state_mu_) = 0;
  std::unordered_map<std::string, uint32_t> batch_versions_ RL_GUARDED_BY(state_mu_);
  UnwrittenIdempotency unwritten_idempotency_ RL_GUARDED_BY(state_mu_);
  // Finished by the batch with the writer: evicted once it is durable.
  std::vector<std::string> writing_finished_ RL_GUARDED_BY(state_mu_);
  FinishedCountStages finished_counts_ RL_GUARDED_BY(state_mu_);

  mutable Mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_ RL_GUARDED_BY(mu_);
  bool stopping_ RL_GUARDED_BY(mu_) = false;
  // A batch is with the writer. Changed under mu_ (the sequencer waits on
  // it); the sequencer also reads it without mu_ between two requests.
  std::atomic<bool> writer_busy_{false};
  // The requests in the open batch as the sequencer left it to sleep.
  size_t open_requests_ RL_GUARDED_BY(mu_) = 0;
  // Whether the sequencer has work: requests to decide, or an open batch
  // for a free writer (see run()).
  bool sequencer_may_take() const RL_REQUIRES(mu_);
  std::string unavailable_ RL_GUARDED_BY(mu_);
  std::optional<Reply> refusal_ RL_GUARDED_BY(mu_);  // see refuse_writes()
  std::atomic<bool> writable_{true};
  std::thread sequencer_;

  // The last snapshot's buffer, handed back by the writer once stored: the
  // next one is encoded into it. A snapshot of many live entities is tens of
  // MB, and first-touching that much fresh memory cost more than encoding.
  Mutex spare_mu_;
  std::string spare_snapshot_ RL_GUARDED_BY(spare_mu_);
  // At most one batch with it at a time; started once the State is loaded.
  std::unique_ptr<BatchWriter> writer_;

  std::unique_ptr<DueTimer> timer_;
  std::unique_ptr<IdempotencyPurge> purge_;  // none when read-only
  LoadReport load_report_;
  std::unique_ptr<IdSource> ids_ RL_GUARDED_BY(state_mu_);
};

}  // namespace runledger
