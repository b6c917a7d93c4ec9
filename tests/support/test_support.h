// Shared test scaffolding: fold decisions into a State the way the engine
// does (encode -> verify -> evolve), deterministic ids, temp folders, and
// helpers for tests that start real runledgerd subprocesses.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "events/event_codec.h"
#include "projections/decision.h"
#include "projections/state.h"

namespace runledger::testing {

// Ids "<prefix>-1", "<prefix>-2", ...: reproducible runs.
class CounterIds : public IdSource {
 public:
  std::string next_id(std::string_view prefix) override;

 private:
  int n_ = 0;
};

// Given/when/then harness for deciders. `apply` encodes every event exactly
// as the engine would (seq, stream version, hash chain), verifies and folds
// it; `when` decides a command against the current state at `now_ms`.
class Given {
 public:
  Given();
  Policy policy;
  CounterIds ids;
  State state;
  int64_t now_ms = 1'700'000'000'000;
  std::string actor = "tester";

  Context ctx();
  // Appends and folds the decision's events; returns them as stored.
  const std::vector<std::string>& apply(const Decision& d);
  // Decides and applies in one step; returns the decision.
  template <typename Cmd>
  Decision run(const Cmd& c);
  // The encoded events so far (all streams, in seq order).
  const std::vector<std::string>& log() const { return log_; }
  // The event types of a decision, e.g. {"JobLeased"}.
  static std::vector<std::string> types(const Decision& d);

 private:
  std::vector<std::string> log_;
  std::vector<std::string> last_;
  std::map<std::string, uint32_t> versions_;
};

template <typename Cmd>
Decision Given::run(const Cmd& c) {
  Decision d = decide(state, c, ctx());
  apply(d);
  return d;
}

// A fresh empty folder under /tmp, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The number in environment variable `name`; `fallback` when it is unset or
// empty. Lets a run of a randomized or sized suite be made longer or replayed.
uint64_t env_number(const char* name, uint64_t fallback);

// Path of a built binary ("runledgerd", "runledger").
std::string bin_path(const std::string& name);
// The value of the unlabelled metric `name` in a /metrics reply's text; -1
// when it has none.
long metric_in(const std::string& metrics_text, const std::string& name);

// Path of a file of the source tree ("docs/operations.md").
std::string source_path(const std::string& relative);
// A free loopback TCP port.
int free_port();

}  // namespace runledger::testing
