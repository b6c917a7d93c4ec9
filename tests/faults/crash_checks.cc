// Log checks of the crash test: see crash_checks.h.
#include "tests/faults/crash_checks.h"

#include <set>

namespace runledger::testing {
namespace {

using nlohmann::json;

// Every grouping of events one command of the crash traffic may write, as
// the deciders emit them (projections/job_decide_*.cc, connector_*.cc).
const std::set<std::vector<std::string>>& whole_commands() {
  static const std::set<std::vector<std::string>> all = {
      {"JobEnqueued"},
      {"JobLeased"},
      {"JobStarted"},
      {"JobStarted", "AttemptSucceeded"},
      {"StepStarted"},
      {"StepSucceeded"},
      {"StepSucceeded", "AttemptSucceeded"},
      {"StepSucceeded", "AttemptCancelled"},
      {"StepFailed", "AttemptFailed"},
      {"StepFailed", "AttemptFailed", "RetryScheduled"},
      {"ConnectorCreated"},
      {"ConnectorStatusChanged"},
      {"SyncStarted"},
      {"SyncSucceeded"},
      {"SyncFailed"},
      {"SyncAborted"},
  };
  return all;
}

uint64_t seq_of(const json& e) { return e.value("seq", uint64_t{0}); }
std::string type_of(const json& e) { return e.value("type", ""); }
std::string command_of(const json& e) { return e.value("command_id", ""); }
int attempt_of(const json& e) { return e.value("data", json::object()).value("attempt", 0); }

std::string types_text(const std::vector<const json*>& group) {
  std::string out;
  for (const json* e : group) out += (out.empty() ? "" : ", ") + type_of(*e);
  return "[" + out + "]";
}

// One command's events: contiguous, one stream, a known grouping, and one
// attempt (a retry names the next attempt).
void check_group(const std::string& id, const std::vector<const json*>& group, Problems* problems) {
  const json& first = *group.front();
  std::vector<std::string> types;
  for (size_t i = 0; i < group.size(); ++i) {
    const json& e = *group[i];
    types.push_back(type_of(e));
    if (seq_of(e) != seq_of(first) + i || e.value("stream", "") != first.value("stream", "")) {
      problems->push_back("command " + id + " is not contiguous in one stream: " + e.dump());
      return;
    }
    const int expected = attempt_of(first) + (type_of(e) == "RetryScheduled" ? 1 : 0);
    if (attempt_of(e) != expected) {
      problems->push_back("command " + id + " mixes attempts: " + e.dump());
    }
  }
  if (whole_commands().count(types) == 0) {
    problems->push_back("command " + id + " wrote " + types_text(group) + " at seq " +
                        std::to_string(seq_of(first)) + ": not a whole command");
  }
}

}  // namespace

LogIndex::LogIndex(std::vector<json> events) : events_(std::move(events)) {
  for (size_t i = 0; i < events_.size(); ++i) {
    by_stream_[events_[i].value("stream", "")].push_back(i);
  }
}

const json* LogIndex::at(const std::string& stream, uint64_t version) const {
  auto it = by_stream_.find(stream);
  if (it == by_stream_.end() || version == 0 || version > it->second.size()) return nullptr;
  return &events_[it->second[version - 1]];
}

uint64_t LogIndex::version_of(const std::string& stream) const {
  auto it = by_stream_.find(stream);
  return it == by_stream_.end() ? 0 : it->second.size();
}

void check_gapless(const LogIndex& log, Problems* problems) {
  std::map<std::string, uint64_t> versions;
  const auto& events = log.events();
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (seq_of(e) != i + 1) {
      problems->push_back("the log has seq " + std::to_string(seq_of(e)) + " at position " +
                          std::to_string(i + 1));
      return;
    }
    const uint64_t expected = ++versions[e.value("stream", "")];
    if (e.value("version", uint64_t{0}) != expected) {
      problems->push_back("expected version " + std::to_string(expected) + ": " + e.dump());
      return;
    }
  }
}

void check_prefix_kept(const std::vector<json>& before, const LogIndex& log, Problems* problems) {
  const auto& now = log.events();
  if (now.size() < before.size()) {
    problems->push_back("the log held " + std::to_string(before.size()) +
                        " events before the kill and " + std::to_string(now.size()) + " after");
    return;
  }
  for (size_t i = 0; i < before.size(); ++i) {
    if (now[i] != before[i]) {
      problems->push_back("event at seq " + std::to_string(i + 1) + " changed across the kill: " +
                          before[i].dump() + " became " + now[i].dump());
      return;
    }
  }
}

void check_commands_whole(const LogIndex& log, Problems* problems) {
  std::map<std::string, std::vector<const json*>> groups;
  for (const json& e : log.events()) {
    if (command_of(e).empty()) {
      problems->push_back("an event without command_id: " + e.dump());
      continue;
    }
    groups[command_of(e)].push_back(&e);
  }
  for (const auto& [id, group] : groups) check_group(id, group, problems);
}

void check_acks_in_log(const LogIndex& log, const std::vector<Ack>& acks, Problems* problems) {
  for (const Ack& a : acks) {
    const std::string said = a.what + " on " + a.stream + " acknowledged at version " +
                             std::to_string(a.version) + (a.resent ? " (resent)" : "");
    const json* e = log.at(a.stream, a.version);
    if (e == nullptr) {
      problems->push_back(said + " is not in the log (the stream has " +
                          std::to_string(log.version_of(a.stream)) + " events)");
      continue;
    }
    const json* next = log.at(a.stream, a.version + 1);
    const json& data = e->value("data", json::object());
    if (a.last_types.count(type_of(*e)) == 0) {
      problems->push_back(said + ": the log has " + e->dump());
    } else if (next != nullptr && command_of(*next) == command_of(*e)) {
      problems->push_back(said + ": its command goes on after that version: " + next->dump());
    } else if (a.attempt != 0 && data.contains("attempt") && attempt_of(*e) != a.attempt) {
      problems->push_back(said + " for attempt " + std::to_string(a.attempt) + ": " + e->dump());
    } else if (!a.sync_id.empty() && data.value("sync_id", "") != a.sync_id) {
      problems->push_back(said + " for sync " + a.sync_id + ": " + e->dump());
    } else if (!a.step.empty()) {
      // The step is on the command's step event, which a last-step done
      // follows with AttemptSucceeded.
      const json* step_event = type_of(*e) == "AttemptSucceeded" || type_of(*e) == "AttemptFailed"
                                   ? log.at(a.stream, a.version - 1)
                                   : e;
      if (type_of(*e) == "RetryScheduled") step_event = log.at(a.stream, a.version - 2);
      if (step_event == nullptr ||
          step_event->value("data", json::object()).value("step", "") != a.step) {
        problems->push_back(said + " for step " + a.step + ": " + e->dump());
      }
    }
  }
}

}  // namespace runledger::testing
