// How a step's end becomes a report to the server (docs/worker.md "How a
// step ends"): the first rule that applies wins.
//   1. a result file with `outcome` -> outcome-unknown;
//   2. exit 0 -> done, output {"exit_code", "duration_ms", "result",
//      "orphans_killed"} (a result file that is not JSON, or over 16 KiB,
//      -> failed, not retryable, "invalid result file");
//   3. an exit code in --retryable-exit, or "retryable": true in the file
//      -> failed, retryable;
//   4. anything else -> failed, not retryable, with "exit N after Ds" or
//      "killed by SIGNAME after Ds", the file's error, the output's tail.
// Pure: the runner gathers the facts, this decides.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace runledger::worker {

inline constexpr size_t kResultFileBytesMax = 16 * 1024;

// How a step's process ended.
struct StepExit {
  std::optional<int> exit_code;  // set when it exited
  int signal = 0;                // set when a signal it was not sent killed it
  int64_t duration_ms = 0;
  int orphans_killed = 0;                  // processes it left in its session
  std::optional<std::string> result_file;  // the file's bytes, when the child wrote one
  std::string output_tail;                 // the last --tail-bytes of its output
};

struct StepReport {
  enum class Kind : uint8_t { kDone, kFailed, kOutcomeUnknown };
  Kind kind = Kind::kFailed;
  nlohmann::json output;     // kDone
  std::string error;         // kFailed
  bool retryable = false;    // kFailed
  std::string unknown_kind;  // kOutcomeUnknown: EXECUTION_STATE_UNKNOWN or RESULT_UNKNOWN
  std::string detail;        // kOutcomeUnknown
};

StepReport step_report(const StepExit& exit, const std::set<int>& retryable_exits);

// "SIGTERM" for 15, "signal 99" for a number without a name.
std::string signal_name(int signal);

}  // namespace runledger::worker
