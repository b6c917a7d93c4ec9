#include "engine/command.h"

#include <type_traits>

namespace runledger {

Decision decide(const State& s, const Command& c, const Context& ctx) {
  return std::visit(
      [&](const auto& cmd) -> Decision {
        using T = std::decay_t<decltype(cmd)>;
        if constexpr (std::is_same_v<T, holds::Place> || std::is_same_v<T, holds::ReleaseHold>) {
          return holds::decide(s, cmd, ctx);
        } else if constexpr (requires { jobs::decide(s, cmd, ctx); }) {
          return jobs::decide(s, cmd, ctx);
        } else {
          return connectors::decide(s, cmd, ctx);
        }
      },
      c);
}

namespace {

template <typename T>
constexpr const char* name_of() {
  if constexpr (std::is_same_v<T, jobs::Enqueue>) return "job.enqueue";
  if constexpr (std::is_same_v<T, jobs::Claim>) return "job.claim";
  if constexpr (std::is_same_v<T, jobs::Heartbeat>) return "job.heartbeat";
  if constexpr (std::is_same_v<T, jobs::Release>) return "job.release";
  if constexpr (std::is_same_v<T, jobs::Start>) return "job.start";
  if constexpr (std::is_same_v<T, jobs::StepStart>) return "job.step_start";
  if constexpr (std::is_same_v<T, jobs::StepDone>) return "job.step_done";
  if constexpr (std::is_same_v<T, jobs::StepFail>) return "job.step_failed";
  if constexpr (std::is_same_v<T, jobs::Cancel>) return "job.cancel";
  if constexpr (std::is_same_v<T, jobs::CancelAck>) return "job.cancel_ack";
  if constexpr (std::is_same_v<T, jobs::OutcomeUnknown>) return "job.outcome_unknown";
  if constexpr (std::is_same_v<T, jobs::Reattach>) return "job.reattach";
  if constexpr (std::is_same_v<T, jobs::Rerun>) return "job.rerun";
  if constexpr (std::is_same_v<T, jobs::Yield>) return "job.yield";
  if constexpr (std::is_same_v<T, jobs::ExpireLeases>) return "system.expire_leases";
  if constexpr (std::is_same_v<T, connectors::Create>) return "connector.create";
  if constexpr (std::is_same_v<T, connectors::Update>) return "connector.update";
  if constexpr (std::is_same_v<T, connectors::Delete>) return "connector.delete";
  if constexpr (std::is_same_v<T, connectors::StartSync>) return "connector.sync";
  if constexpr (std::is_same_v<T, connectors::AbortSync>) return "connector.abort";
  if constexpr (std::is_same_v<T, connectors::ReportProgress>) return "connector.progress";
  if constexpr (std::is_same_v<T, connectors::ReportSucceeded>) return "connector.succeeded";
  if constexpr (std::is_same_v<T, connectors::ReportFailed>) return "connector.failed";
  if constexpr (std::is_same_v<T, connectors::RunSchedule>) return "system.run_schedule";
  if constexpr (std::is_same_v<T, connectors::RecordScheduleGaps>) return "system.schedule_gaps";
  if constexpr (std::is_same_v<T, holds::Place>) return "hold.place";
  if constexpr (std::is_same_v<T, holds::ReleaseHold>) return "hold.release";
}

}  // namespace

const char* command_name(const Command& c) {
  return std::visit([](const auto& cmd) { return name_of<std::decay_t<decltype(cmd)>>(); }, c);
}

std::vector<std::string> streams_named(const Command& c) {
  return std::visit(
      [](const auto& cmd) -> std::vector<std::string> {
        using T = std::decay_t<decltype(cmd)>;
        if constexpr (std::is_same_v<T, jobs::Enqueue>) {
          return {job_stream(cmd.id)};
        } else if constexpr (requires { cmd.job_id; }) {
          return {job_stream(cmd.job_id)};
        } else if constexpr (std::is_same_v<T, holds::Place>) {
          std::vector<std::string> out{hold_stream(cmd.id)};
          if (!cmd.job.empty()) out.push_back(job_stream(cmd.job));
          return out;
        } else if constexpr (std::is_same_v<T, holds::ReleaseHold>) {
          return {hold_stream(cmd.id)};
        } else if constexpr (requires { cmd.id; }) {
          return {connector_stream(cmd.id)};
        } else {
          return {};
        }
      },
      c);
}

}  // namespace runledger
