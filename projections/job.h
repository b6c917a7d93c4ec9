// The job model (spec: docs/domain.md section 1 and 1.8): entities, commands, the
// pure decider, the fold and the JSON view.
//
// A job runs as attempts; each attempt has its own state machine, written
// at AttemptState below. Retries, reruns and yields are followed by new
// attempts. Thread-compatible: the engine's sequencer is the only thread
// that touches a State.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "events/event_generated.h"
#include "projections/decision.h"

namespace runledger {
struct State;
}

namespace runledger::jobs {

// The legal exits of each, by event; job_commands.h has them as the table
// (kEventRules) that `runledger verify` checks and the tests hold the fold to.
enum class AttemptState : uint8_t {
  kQueued,     // -> LEASED (JobLeased), CANCELLED (AttemptCancelled)
  kLeased,     // -> RUNNING (JobStarted), QUEUED (LeaseReleased, LeaseExpired), CANCELLED
  kRunning,    // -> SUCCEEDED, FAILED, CANCELLED, STALE (AttemptStale), YIELDED (AttemptYielded)
  kStale,      // -> RUNNING (ExecutionReattached), SUCCEEDED or FAILED (AttemptResolved),
               //    CANCELLED (a step's observed exit while a cancel was requested)
  kSucceeded,  // terminal: a rerun opens a new attempt
  kFailed,     // terminal: a retry or a rerun opens a new attempt
  kCancelled,  // terminal: a rerun opens a new attempt
  kYielded     // terminal, the next attempt opened with it; last: snapshots store the
               // numeric value (projections/snapshot.fbs)
};
enum class StepState : uint8_t { kPending, kRunning, kDone, kFailed, kReused };

const char* to_string(AttemptState s);
const char* to_string(StepState s);
std::optional<AttemptState> attempt_state_from(std::string_view s);
std::optional<StepState> step_state_from(std::string_view s);
bool is_terminal(AttemptState s);
// True when `handle` is 1 to kExecutionHandleCharsMax printable ASCII characters.
bool valid_execution_handle(std::string_view handle);

// Limits on enqueue input (422 naming the field beyond them).
inline constexpr size_t kPlanStepsMax = 64;
inline constexpr size_t kStepNameBytesMax = 64;
inline constexpr size_t kInputBytesMax = 64 * 1024;
inline constexpr size_t kOutputBytesMax = 16 * 1024;
inline constexpr size_t kErrorBytesMax = 4096;
inline constexpr int kMaxAttemptsMax = 100;
inline constexpr size_t kLeaseTokenChars = 32;   // hex
inline constexpr size_t kReasonBytesMax = 1024;  // cancel, rerun and yield reasons
// An execution_handle is 1 to this many printable ASCII characters (0x20-0x7E),
// wherever it is accepted (start, reattach): docs/api.md "Jobs".
inline constexpr size_t kExecutionHandleCharsMax = 256;
// Reruns add attempts without end; this bounds a job's memory and view.
inline constexpr int kAttemptsMax = 1000;
// Leases expired by one ExpireLeases command; the rest stay due (next_due_ms()
// is still in the past), so the engine's timer runs the command again at once.
// Each command costs a round through the queue and a synced write: at 2,048
// per command the timer keeps up with ~100,000 leases coming due per second,
// and one command's events are no more than a busy batch carries anyway.
inline constexpr size_t kExpiriesPerCommandMax = 2048;

struct Step {
  std::string name;
  StepState state = StepState::kPending;
  int64_t started_at_ms = 0;
  int64_t finished_at_ms = 0;
  std::string output;  // JSON text, empty when none
  std::string error;
  int reused_from = 0;  // attempt number, for kReused
};

struct Attempt {
  int number = 0;
  AttemptState state = AttemptState::kQueued;
  int64_t created_at_ms = 0;
  int64_t started_at_ms = 0;   // JobStarted
  int64_t finished_at_ms = 0;  // terminal
  int64_t not_before_ms = 0;
  std::string error;
  std::vector<Step> steps;
  // Lease (LEASED / RUNNING / STALE keep the last worker for forensics).
  std::string worker;
  std::string lease_token_sha256;
  int64_t lease_s = 0;
  int64_t lease_expires_at_ms = 0;
  std::string execution_handle;
  // Cancel.
  bool cancel_requested = false;
  std::string cancel_reason;
  std::string cancel_requested_by;
  std::string last_completed_step;
  bool cleanup_needed = false;
  // Hold placed when this attempt became STALE (open until released).
  std::string stale_hold_id;
};

struct Job {
  std::string id;
  std::string kind;
  std::string target;
  std::string input;  // JSON text
  std::vector<std::string> plan;
  std::vector<std::string> reuse_on_rerun;
  int max_attempts = 3;
  int priority = 0;
  int64_t not_before_ms = 0;
  std::vector<Attempt> attempts;  // attempts[i].number == i + 1
  uint64_t enqueue_seq = 0;       // FIFO order among equal priorities
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  uint32_t version = 0;  // stream version of the last event

  const Attempt& latest() const { return attempts.back(); }
  Attempt& latest() { return attempts.back(); }
  // The attempt numbered `number`, or nullptr.
  const Attempt* attempt(int number) const {
    return number >= 1 && static_cast<size_t>(number) <= attempts.size() ? &attempts[number - 1]
                                                                         : nullptr;
  }
  Attempt* attempt(int number) {
    return const_cast<Attempt*>(static_cast<const Job&>(*this).attempt(number));
  }
};

// Ready queue order: higher priority first, then enqueue order.
struct ReadyKey {
  int priority;
  uint64_t enqueue_seq;
  std::string job_id;
  bool operator<(const ReadyKey& o) const {
    return std::tie(o.priority, enqueue_seq, job_id) < std::tie(priority, o.enqueue_seq, o.job_id);
  }
};

// count_by_state with every attempt state at zero, so metrics list them all.
std::map<std::string, size_t> zero_counts_by_state();

struct JobsState {
  std::map<std::string, Job, std::less<>> by_id;  // live (and hydrated) jobs; find by string_view
  std::set<ReadyKey> ready;                       // QUEUED attempts
  std::unordered_map<std::string, std::string> holder;  // target -> job holding it (LEASED/RUNNING)
  std::set<std::pair<int64_t, std::string>>
      expiries;  // (lease_expires_at_ms, job) of LEASED/RUNNING
  std::map<std::string, size_t> count_by_state = zero_counts_by_state();  // for metrics
};

// ---- commands (fields validated for shape by the HTTP layer; deciders
// check everything that depends on state or policy) ----

struct Enqueue {
  std::string id;
  std::string kind;
  std::string target;
  std::string input = "null";  // canonical JSON text
  std::vector<std::string> plan = {"FETCH", "VALIDATE", "LOAD", "AGGREGATE"};
  std::vector<std::string> reuse_on_rerun = {"FETCH"};
  int max_attempts = 3;
  int priority = 0;
  int64_t not_before_ms = 0;
};
struct Claim {
  std::string worker;
  std::vector<std::string> kinds;  // empty: any kind
  std::optional<int64_t> lease_s;
  std::string lease_token;  // fresh, made by the facade; stored hashed
};
struct Heartbeat {
  std::string job_id;
  std::string lease_token;
  std::optional<int64_t> lease_s;
};
struct Release {
  std::string job_id;
  std::string lease_token;
};
struct Start {
  std::string job_id;
  std::string lease_token;
  std::string execution_handle;
};
struct StepStart {
  std::string job_id;
  std::string step;
  std::string lease_token;
};
struct StepDone {
  std::string job_id;
  std::string step;
  std::string lease_token;
  std::string output;  // JSON text or empty
};
struct StepFail {
  std::string job_id;
  std::string step;
  std::string lease_token;
  std::string error;
  bool retryable = false;
};
struct Cancel {
  std::string job_id;
  std::string reason;
};
struct CancelAck {
  std::string job_id;
  std::string lease_token;
};
struct OutcomeUnknown {
  std::string job_id;
  std::string lease_token;
  std::string kind;  // EXECUTION_STATE_UNKNOWN | RESULT_UNKNOWN
  std::string detail;
};
struct Reattach {
  std::string job_id;
  std::string worker;
  std::string execution_handle;
  std::string observed;  // running | exited
  std::optional<int> exit_code;
  std::optional<int64_t> lease_s;
  // Fresh, for observed=running and for an observed exit of one step (the
  // attempt may run on under it); stored hashed.
  std::string lease_token;
  // An observed exit of one step (docs/domain.md 1.8): the step, its output (JSON
  // text or empty) and, for a non-zero exit, whether a retry may follow.
  std::string step = {};
  std::string output = {};
  bool retryable = false;
};
// The worker hands a RUNNING attempt back between steps (docs/domain.md 1.9).
struct Yield {
  std::string job_id;
  std::string lease_token;
  std::string reason;
};
struct Rerun {
  std::string job_id;
  std::string reason;
};
// System: expire every lease due at context.now_ms (docs/domain.md 1.4).
struct ExpireLeases {};

Decision decide(const State& s, const Enqueue& c, const Context& ctx);
Decision decide(const State& s, const Claim& c, const Context& ctx);
Decision decide(const State& s, const Heartbeat& c, const Context& ctx);
Decision decide(const State& s, const Release& c, const Context& ctx);
Decision decide(const State& s, const Start& c, const Context& ctx);
Decision decide(const State& s, const StepStart& c, const Context& ctx);
Decision decide(const State& s, const StepDone& c, const Context& ctx);
Decision decide(const State& s, const StepFail& c, const Context& ctx);
Decision decide(const State& s, const Cancel& c, const Context& ctx);
Decision decide(const State& s, const CancelAck& c, const Context& ctx);
Decision decide(const State& s, const OutcomeUnknown& c, const Context& ctx);
Decision decide(const State& s, const Reattach& c, const Context& ctx);
Decision decide(const State& s, const Rerun& c, const Context& ctx);
Decision decide(const State& s, const Yield& c, const Context& ctx);
Decision decide(const State& s, const ExpireLeases& c, const Context& ctx);

// Folds one job-stream event (payload types JobEnqueued..AttemptResolved,
// AttemptYielded)
// into the state, keeping every index above in step.
void evolve(State& s, const fb::Event& e);

// The earliest lease expiry, 0 when no lease is open.
int64_t next_due_ms(const State& s);
// True when the latest attempt is terminal: the job may leave memory.
bool finished(const Job& j);

// The job as the HTTP API shows it (docs/api.md "A job in JSON").
nlohmann::json view(const State& s, const Job& j);
// view(s, j).dump(), byte for byte (the same exception too), written without
// building the json tree: the engine renders it for every job that finishes.
std::string view_text(const State& s, const Job& j);
// view_text's bytes, or nullopt where a text of the job is not UTF-8 (there
// dump() throws, and the caller renders the tree as it renders any other).
std::optional<std::string> try_view_text(const State& s, const Job& j);
// Every field, for comparing states (job_snapshot.cc).
nlohmann::json to_json(const Job& j);
// Re-inserts a job in any state (from a snapshot or hydration), replacing one
// with the same id, and rebuilds its index entries.
void adopt(State& s, Job job);
// Removes a finished job from memory (its view lives in the store). A job
// whose latest attempt is not terminal stays: claims and expiries need it.
void evict(State& s, const std::string& job_id);

}  // namespace runledger::jobs
