// EngineHarness: an Engine on a real RocksDB store in a temporary folder,
// with the store wrapped as RocksDB -> FaultyStore -> RecordingStore so a
// test can inject write failures and watch every append. The engine runs on
// a ManualClock with its timers off unless a test asks otherwise. reopen()
// shuts the engine down and opens a new one on the same folder: a restart.
//
// Also the small pieces every engine test uses: a generic reply renderer,
// requests with idempotency keys, reads of the State on the sequencer, and
// the W1 job lifecycle (enqueue, claim, start, each step start + done).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "tests/engine/recording_store.h"
#include "tests/support/faulty_store.h"
#include "tests/support/test_support.h"

namespace runledger::testing {

inline constexpr int64_t kMsPerS = 1000;

// Options for tests: no timers (ManualClock + tick()), a small lease minimum.
EngineOptions test_engine_options();

class EngineHarness {
 public:
  // `clock` null: the harness's ManualClock. A given clock must outlive it.
  explicit EngineHarness(EngineOptions options = test_engine_options(),
                         const Clock* clock = nullptr);
  ~EngineHarness();

  // Opens the store stack and the engine; throws when either fails.
  void open();
  // Shuts the engine down (final snapshot) and closes the store.
  void close();
  void reopen() {
    close();
    open();
  }

  Engine& engine() { return *engine_; }
  RecordingStore& store() { return *recorder_; }
  FaultyStore& faults() { return *faulty_; }
  const std::string& folder() const { return dir_.path(); }

  ManualClock clock;
  EngineOptions options;

 private:
  TempDir dir_;
  const Clock* engine_clock_;
  FaultyStore* faulty_ = nullptr;
  std::shared_ptr<RecordingStore> recorder_;
  std::unique_ptr<Engine> engine_;
};

// Renders any command's outcome: a refusal as its error reply; otherwise 200
// with {"seq": last seq after the command, "events": [types], "body": d.body}.
Reply outcome_reply(const State& s, const Decision* d);
// The reply body as JSON (null when empty or not JSON).
nlohmann::json body_json(const Reply& r);
// The job a claim's outcome_reply handed out; empty when none.
std::string claimed_job(const Reply& r);

Request command_request(Command c, const std::string& idempotency_key = "");
// With an idempotency key: `request_text` stands for method, path and body.
Request keyed_request(Command c, const std::string& key, const std::string& request_text);
// Executes `c` with outcome_reply.
Reply run(Engine& e, Command c);

// Runs `f(state)` on the sequencer and returns its result.
template <typename F>
auto inspect(Engine& e, F&& f) {
  std::invoke_result_t<F, const State&> out{};
  e.read([&](const State& s, const Decision*) {
    out = f(s);
    return Reply{200, ""};
  });
  return out;
}

// What `e` holds in memory as a state digest, read on its sequencer.
nlohmann::json engine_digest(Engine& e);
// The State a fresh load of `store` builds, from its snapshot or from the log
// alone; a load that fails fails the test.
State loaded_state(const EventStore& store, bool use_snapshot, bool evict_finished = true);
// Its digest.
nlohmann::json loaded_digest(const EventStore& store, bool use_snapshot,
                             bool evict_finished = true);

// A 32-hex-digit lease token derived from `seed`.
std::string lease_token(const std::string& seed);

jobs::Enqueue enqueue_command(const std::string& id, const std::string& kind,
                              const std::string& target);

// Called after each command of a lifecycle with its reply and latency.
using ReplyObserver = std::function<void(const Reply& r, double latency_ms)>;
// W1 for one job (11 commands with the default plan): enqueue `id` of its own
// `kind`, claim that kind, start, then step start + done for every step.
// Returns an empty string when every reply was 2xx and the claim got `id`,
// else what went wrong.
std::string run_w1_job(Engine& e, const std::string& id, const std::string& kind,
                       const std::string& target, const ReplyObserver& observe);
// Commands run_w1_job issues with the default plan.
inline constexpr int kW1CommandsPerJob = 11;

}  // namespace runledger::testing
