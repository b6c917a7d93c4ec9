#include "worker/step_outcome.h"

#include <fmt/format.h>

#include <csignal>
#include <cstring>

namespace runledger::worker {
namespace {

std::string seconds_text(int64_t ms) {
  return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000);
}

StepReport failed(std::string error, bool retryable) {
  StepReport r;
  r.kind = StepReport::Kind::kFailed;
  r.error = std::move(error);
  r.retryable = retryable;
  return r;
}

}  // namespace

std::string signal_name(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

StepReport step_report(const StepExit& exit, const std::set<int>& retryable_exits) {
  nlohmann::json file = nullptr;
  bool file_valid = true;
  if (exit.result_file) {
    file = nlohmann::json::parse(*exit.result_file, nullptr, /*allow_exceptions=*/false);
    file_valid = exit.result_file->size() <= kResultFileBytesMax && file.is_object();
    if (!file_valid) file = nullptr;
  }
  // 1. The child says it does not know what happened.
  if (file.is_object() && file.contains("outcome") && file["outcome"].is_string()) {
    const std::string outcome = file["outcome"].get<std::string>();
    if (outcome == "result_unknown" || outcome == "execution_unknown") {
      StepReport r;
      r.kind = StepReport::Kind::kOutcomeUnknown;
      r.unknown_kind = outcome == "result_unknown" ? "RESULT_UNKNOWN" : "EXECUTION_STATE_UNKNOWN";
      if (file.contains("detail") && file["detail"].is_string()) {
        r.detail = file["detail"].get<std::string>();
      }
      return r;
    }
  }
  // 2. Success, unless what it wrote cannot be read.
  if (exit.exit_code == 0) {
    if (!file_valid) return failed("invalid result file", false);
    StepReport r;
    r.kind = StepReport::Kind::kDone;
    r.output = {{"exit_code", 0},
                {"duration_ms", exit.duration_ms},
                {"result", file.is_object() && file.contains("output") ? file["output"] : nullptr},
                {"orphans_killed", exit.orphans_killed}};
    return r;
  }
  // 3 and 4. A failure, retryable or not.
  const bool retryable = (exit.exit_code && retryable_exits.count(*exit.exit_code) > 0) ||
                         (file.is_object() && file.value("retryable", false) == true);
  std::string error =
      exit.exit_code
          ? fmt::format("exit {} after {}", *exit.exit_code, seconds_text(exit.duration_ms))
          : fmt::format("killed by {} after {}", signal_name(exit.signal),
                        seconds_text(exit.duration_ms));
  if (file.is_object() && file.contains("error") && file["error"].is_string()) {
    error += ": " + file["error"].get<std::string>();
  }
  if (!exit.output_tail.empty()) error += "\n" + exit.output_tail;
  return failed(std::move(error), retryable);
}

}  // namespace runledger::worker
