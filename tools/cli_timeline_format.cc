// The words of `runledger timeline`: see cli_timeline_format.h.
#include "tools/cli_timeline_format.h"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "events/event_codec.h"
#include "events/event_json.h"

namespace runledger::cli::timeline {

namespace {

using nlohmann::json;

constexpr int64_t kMsPerS = 1000;
constexpr int64_t kSPerMin = 60;
constexpr int64_t kSPerHour = 3600;
// Free text (reasons, errors, outputs) is cut to this many bytes on a line.
constexpr size_t kValueBytesMax = 160;

// The fields a person looks for first, per event type; what is not listed
// stays in `runledger events`.
const std::map<std::string, std::vector<std::string>, std::less<>>& key_field_table() {
  static const auto* table = new std::map<std::string, std::vector<std::string>, std::less<>>{
      {"JobEnqueued", {"kind", "target", "plan", "max_attempts", "priority", "not_before"}},
      {"JobLeased", {"worker", "lease_s", "lease_expires_at"}},
      {"LeaseRenewed", {"worker", "lease_s", "lease_expires_at"}},
      {"LeaseReleased", {"worker"}},
      {"LeaseExpired", {"worker", "state", "lease_expires_at"}},
      {"JobStarted", {"worker", "execution_handle"}},
      {"StepStarted", {"step", "worker"}},
      {"StepSucceeded", {"step", "worker", "output"}},
      {"StepFailed", {"step", "worker", "error", "retryable"}},
      {"CancelRequested", {"reason"}},
      {"AttemptCancelled", {"cause", "worker", "reason", "last_completed_step", "cleanup_needed"}},
      {"AttemptSucceeded", {"worker"}},
      {"AttemptFailed", {"worker", "error"}},
      {"RetryScheduled", {"previous_attempt", "not_before", "reused_steps", "worker"}},
      {"RerunRequested", {"previous_attempt", "reason", "reused_steps"}},
      {"AttemptStale", {"cause", "worker", "hold_id", "hold_kind", "detail"}},
      {"ExecutionReattached",
       {"worker", "execution_handle", "previous_state", "lease_expires_at", "released_hold_id"}},
      {"AttemptResolved", {"outcome", "step", "exit_code", "evidence", "worker", "hold_id"}},
      {"AttemptYielded", {"worker", "reason", "next_attempt", "reused_steps"}},
      {"ConnectorCreated", {"name", "sync_schedule_s"}},
      {"ConnectorUpdated", {"name", "schedule_changed", "sync_schedule_s"}},
      {"ConnectorStatusChanged", {"from", "to"}},
      {"SyncStarted", {"sync_id", "trigger", "slot_at"}},
      {"SyncProgressed", {"sync_id", "documents"}},
      {"SyncSucceeded", {"sync_id", "documents"}},
      {"SyncFailed", {"sync_id", "error"}},
      {"SyncAborted", {"sync_id", "pending_failed", "running_failed"}},
      {"SyncReportIgnored", {"sync_id", "report", "reason"}},
      {"SyncSkipped", {"reason", "slot_at", "running_sync_id"}},
      {"SyncLockBroken", {"sync_id", "started_at", "age_s", "slot_at"}},
      {"ScheduleGap", {"slots_missed", "from", "to"}},
      {"ConnectorDeletionStarted", {}},
      {"ConnectorDeleted", {"documents_removed"}},
      {"HoldPlaced", {"target", "kind", "job", "attempt", "worker", "reason"}},
      {"HoldReleased", {"note", "execution_stopped", "outcome", "worker"}},
  };
  return *table;
}

std::string cut(std::string text) {
  if (text.size() > kValueBytesMax) text = text.substr(0, kValueBytesMax) + "...";
  return text;
}

std::string text_value(const std::string& s) {
  // A bare word reads best; text with spaces is quoted so fields stay apart.
  if (!s.empty() && s.find_first_of(" \t\n\"=") == std::string::npos) return cut(s);
  return cut(json(s).dump());
}

// Counts of a DocumentChanges table: "pending:2,indexed:5".
std::string document_counts(const json& docs) {
  std::vector<std::string> parts;
  for (const char* key : {"pending", "running", "indexed", "failed"}) {
    if (docs.contains(key) && docs[key].is_array() && !docs[key].empty()) {
      parts.push_back(fmt::format("{}:{}", key, docs[key].size()));
    }
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

// One field as "name=value", empty when it has nothing to say.
std::string field(const std::string& name, const json& v) {
  std::string value;
  if (v.is_null() || (v.is_string() && v.get<std::string>().empty()) ||
      (v.is_boolean() && !v.get<bool>()) || (v.is_number() && v.get<double>() == 0)) {
    return "";
  }
  if (name == "documents" && v.is_object()) {
    value = document_counts(v);
  } else if (v.is_array()) {
    std::vector<std::string> items;
    for (const auto& item : v)
      items.push_back(item.is_string() ? item.get<std::string>() : item.dump());
    value = fmt::format("{}", fmt::join(items, ","));
  } else if (v.is_string()) {
    value = text_value(v.get<std::string>());
  } else {
    value = cut(v.dump());
  }
  return value.empty() ? "" : name + "=" + value;
}

}  // namespace

std::string format_delta(int64_t delta_ms) {
  const char* sign = delta_ms < 0 ? "-" : "+";
  uint64_t ms = static_cast<uint64_t>(delta_ms < 0 ? -delta_ms : delta_ms);
  uint64_t s = ms / kMsPerS, frac = ms % kMsPerS;
  if (s < kSPerMin) return fmt::format("{}{}.{:03}s", sign, s, frac);
  if (s < kSPerHour)
    return fmt::format("{}{}m{:02}.{:03}s", sign, s / kSPerMin, s % kSPerMin, frac);
  return fmt::format("{}{}h{:02}m{:02}.{:03}s", sign, s / kSPerHour, s % kSPerHour / kSPerMin,
                     s % kSPerMin, frac);
}

std::string key_fields(const fb::Event& e) {
  json data = event_data_json(e);
  std::vector<std::string> names;
  auto row = key_field_table().find(event_type_name(e.payload_type()));
  if (row != key_field_table().end()) {
    names = row->second;
  } else {
    for (const auto& [k, v] : data.items()) names.push_back(k);
  }
  // An exit code of 0 is a fact when the event says it has one.
  const bool exit_code_known = data.value("has_exit_code", false);
  std::vector<std::string> parts;
  for (const auto& name : names) {
    if (!data.contains(name)) continue;
    std::string f = name == "exit_code" && exit_code_known ? "exit_code=" + data[name].dump()
                                                           : field(name, data[name]);
    if (!f.empty()) parts.push_back(std::move(f));
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

std::string attempt_state(const State& s, const std::string& id, int number) {
  auto it = s.jobs.by_id.find(id);
  if (it == s.jobs.by_id.end()) return "(none)";
  const jobs::Attempt* a = it->second.attempt(number);
  return a == nullptr ? "(none)" : jobs::to_string(a->state);
}

std::string connector_state(const State& s, const std::string& id) {
  auto it = s.connectors.by_id.find(id);
  if (it == s.connectors.by_id.end()) return "(none)";
  return fmt::format("{}/{}", connectors::to_string(it->second.status),
                     connectors::to_string(it->second.sync_status));
}

std::string hold_state(const State& s, const std::string& id) {
  auto it = s.holds.by_id.find(id);
  if (it == s.holds.by_id.end()) return "(none)";
  return it->second.released ? "released" : "open";
}

std::string transition(const std::string& before, const std::string& after) {
  return before == after ? before : before + " -> " + after;
}

int attempt_of(const fb::Event& e) {
  json data = event_data_json(e);
  return data.contains("attempt") && data["attempt"].is_number_integer()
             ? data["attempt"].get<int>()
             : 0;
}

std::string for_terminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace runledger::cli::timeline
