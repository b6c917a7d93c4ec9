// Log checks of the crash test: see crash_checks.h.
#include "tests/faults/crash_checks.h"

#include <functional>
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

uint64_t version_in_stream(const json& e) { return e.value("version", uint64_t{0}); }

}  // namespace

LogWindow::LogWindow(uint64_t after, std::vector<json> events)
    : after_(after), events_(std::move(events)) {
  for (size_t i = 0; i < events_.size(); ++i) {
    Stream& s = streams_[events_[i].value("stream", "")];
    if (s.events.empty()) s.first_version = version_in_stream(events_[i]);
    s.events.push_back(i);
  }
}

const json* LogWindow::at(const std::string& stream, uint64_t version) const {
  auto it = streams_.find(stream);
  if (it == streams_.end() || version < it->second.first_version) return nullptr;
  const uint64_t i = version - it->second.first_version;
  return i < it->second.events.size() ? &events_[it->second.events[i]] : nullptr;
}

bool LogWindow::covers(const std::string& stream, uint64_t version) const {
  auto it = streams_.find(stream);
  return it != streams_.end() && it->second.first_version <= version;
}

uint64_t LogWindow::version_of(const std::string& stream) const {
  auto it = streams_.find(stream);
  if (it == streams_.end()) return 0;
  return it->second.first_version + it->second.events.size() - 1;
}

size_t LogHistory::digest(const json& event) { return std::hash<std::string>{}(event.dump()); }

uint64_t LogHistory::version_of(const std::string& stream) const {
  auto it = versions_.find(stream);
  return it == versions_.end() ? 0 : it->second;
}

void LogHistory::add(const LogWindow& window) {
  for (const json& e : window.events()) {
    if (seq_of(e) <= last_seq()) continue;
    if (seq_of(e) != last_seq() + 1) return;  // a gap, which check_gapless reports
    digests_.push_back(digest(e));
    versions_[e.value("stream", "")] = version_in_stream(e);
    commands_.insert(command_of(e));
  }
}

void check_prefix_kept(const LogHistory& seen, const LogWindow& log, Problems* problems) {
  const uint64_t end = log.after() + log.events().size();
  if (log.after() > seen.last_seq() || end < seen.last_seq()) {
    problems->push_back("the log held " + std::to_string(seen.last_seq()) +
                        " events before the kill; after it, seqs " +
                        std::to_string(log.after() + 1) + " to " + std::to_string(end) +
                        " were read");
    return;
  }
  for (const json& e : log.events()) {
    const uint64_t seq = seq_of(e);
    if (seq == 0 || seq > seen.last_seq()) break;
    if (LogHistory::digest(e) != seen.digest_at(seq)) {
      problems->push_back("event at seq " + std::to_string(seq) +
                          " changed across the kill; it is now " + e.dump());
      return;
    }
  }
}

void check_gapless(const LogHistory& seen, const LogWindow& log, Problems* problems) {
  std::unordered_map<std::string, uint64_t> versions;  // of the streams new events continue
  const auto& events = log.events();
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    const uint64_t seq = log.after() + i + 1;
    if (seq_of(e) != seq) {
      problems->push_back("the log has seq " + std::to_string(seq_of(e)) + " where seq " +
                          std::to_string(seq) + " belongs");
      return;
    }
    if (seq <= seen.last_seq()) continue;
    const std::string stream = e.value("stream", "");
    auto [it, first] = versions.try_emplace(stream, 0);
    if (first) it->second = seen.version_of(stream);
    const uint64_t expected = ++it->second;
    if (version_in_stream(e) != expected) {
      problems->push_back("expected version " + std::to_string(expected) + ": " + e.dump());
      return;
    }
  }
}

void check_commands_whole(const LogHistory& seen, const LogWindow& log, Problems* problems) {
  std::map<std::string, std::vector<const json*>> groups;
  for (const json& e : log.events()) {
    if (seq_of(e) <= seen.last_seq()) continue;
    if (command_of(e).empty()) {
      problems->push_back("an event without command_id: " + e.dump());
      continue;
    }
    groups[command_of(e)].push_back(&e);
  }
  for (const auto& [id, group] : groups) {
    if (seen.command_written(id)) {
      problems->push_back("command " + id + " wrote events before the kill and again at seq " +
                          std::to_string(seq_of(*group.front())) + ": applied twice");
      continue;
    }
    check_group(id, group, problems);
  }
}

void check_acks_in_log(const LogWindow& log, std::span<const Ack> acks, Problems* problems) {
  for (const Ack& a : acks) {
    const std::string said = a.what + " on " + a.stream + " acknowledged at version " +
                             std::to_string(a.version) + (a.resent ? " (resent)" : "");
    const json* e = log.at(a.stream, a.version);
    if (e == nullptr) {
      problems->push_back(said + " is not in the log (the stream's latest version is " +
                          std::to_string(log.version_of(a.stream)) + ")");
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
