// The checks the crash test runs on the log a restarted server serves
// (docs/performance.md "Reliability", docs/domain.md section 4): the log is gapless and
// kept what it held before the kill; every command wrote all its events or
// none; every acknowledged command is there, at the version its reply named.
// Pure functions of the events and the clients' records: each appends one
// sentence per problem it finds.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/faults/crash_clients.h"

namespace runledger::testing {

using Problems = std::vector<std::string>;

// The global log (GET /v1/events), and each stream's events by version.
class LogIndex {
 public:
  explicit LogIndex(std::vector<nlohmann::json> events);
  const std::vector<nlohmann::json>& events() const { return events_; }
  // The event at `version` of `stream`; null when the stream is shorter.
  const nlohmann::json* at(const std::string& stream, uint64_t version) const;
  uint64_t version_of(const std::string& stream) const;

 private:
  std::vector<nlohmann::json> events_;
  std::map<std::string, std::vector<size_t>> by_stream_;  // stream -> index of version 1, 2, ...
};

// Seqs run 1..N without a gap; each stream's versions run 1..n in order.
void check_gapless(const LogIndex& log, Problems* problems);
// What the log held before the kill is still there, unchanged, in front.
void check_prefix_kept(const std::vector<nlohmann::json>& before, const LogIndex& log,
                       Problems* problems);
// Grouped by command_id, each command's events are contiguous, in one
// stream, and exactly one of the groupings the deciders write: no command
// is half applied.
void check_commands_whole(const LogIndex& log, Problems* problems);
// Each acknowledged command's last event is in the log at the version its
// reply showed, of the type, attempt, step and sync id it must have, and
// ends its command.
void check_acks_in_log(const LogIndex& log, const std::vector<Ack>& acks, Problems* problems);

}  // namespace runledger::testing
