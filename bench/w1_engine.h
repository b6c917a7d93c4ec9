// The W1 driver on the in-process engine: `callers` threads (or chains of
// completions, with plan.chained) each run whole jobs (enqueue, claim,
// start, step start + done for each of the 4 steps: 11 commands, ending
// SUCCEEDED) one after the other until `jobs` are done.
// Each caller claims only its own kind and uses targets no other caller
// uses, so every claim must hand out the job just enqueued; any other reply
// is a failure of the run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench.h"
#include "bench/latency.h"
#include "engine/engine.h"

namespace runledger::bench {

inline constexpr int kW1CommandsPerJob = 11;
inline constexpr int64_t kW1LeaseS = 60;
// Failures kept for a run's report: the first ones tell the story.
inline constexpr size_t kW1FailuresKeptMax = 10;

struct W1Plan {
  size_t callers = kDefaultCallers;
  uint64_t jobs = kDefaultJobs;
  size_t targets = kDefaultTargets;
  std::string id_prefix = "w1";
  bool record_latency = true;
  // false: each caller is a thread that waits for every reply (execute).
  // true: each caller is a chain of commands submitted from the previous
  // command's completion (Engine::submit), so thousands of callers can be
  // in flight without a thread each; see w1_chained.h.
  bool chained = false;
};

// One command of a W1 job with the reply it must get.
struct W1Step {
  Command command;
  std::string want;  // 200 and a body containing this (see brief_reply)
  std::string what;  // names the step in a failure
};

struct W1Outcome {
  uint64_t jobs_succeeded = 0;  // every reply as expected, the last one SUCCEEDED
  uint64_t commands = 0;
  double seconds = 0;
  double cpu_seconds = 0;  // of the whole process while the callers ran
  LatencyRecorder latency;
  std::vector<std::string> failures;  // the first few
};

// Adds what each caller measured (its latencies and commands) to `out`;
// `callers` holds pointers to objects with the members `latency` and
// `commands`.
template <typename Callers>
void add_caller_figures(const Callers& callers, W1Outcome* out) {
  for (const auto& caller : callers) {
    out->latency.merge(caller->latency);
    out->commands += caller->commands;
  }
}

// A reply cheap to render (the engine is measured, not JSON): a refusal's
// status and code, 204 when nothing happened, or 200 with "<stream of the
// first event> <type of the last event>".
Reply brief_reply(const State& s, const Decision* d);

// The 11 commands of job `n`, a caller's k-th.
std::vector<W1Step> w1_job_steps(const W1Plan& plan, size_t caller, uint64_t n, uint64_t k);
// "" when `reply` is what a step wanted, else what was wrong.
std::string w1_reply_error(const Reply& reply, const std::string& want);

// The id of job number `n` of a plan (the W1 workloads check these).
std::string w1_job_id(const W1Plan& plan, uint64_t n);
// The target of a caller's k-th job: disjoint between callers.
std::string w1_target(const W1Plan& plan, size_t caller, uint64_t k);

W1Outcome drive_w1(Engine& engine, const W1Plan& plan, const ProgressFn& progress,
                   std::string_view phase);

}  // namespace runledger::bench
