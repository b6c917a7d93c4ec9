// The checks the crash test runs on the log a restarted server serves
// (docs/performance.md "Reliability", docs/domain.md section 4): the log is gapless and
// kept what it held before the kill; every command wrote all its events or
// none; every acknowledged command is there, at the version its reply named.
//
// Each restart looks only at what is new: a window of the log (the events
// after some seq) against a LogHistory of what earlier restarts saw, so a
// cycle costs what its load wrote, not the whole log again, and 1,000 cycles
// take minutes rather than hours. What the window no longer covers stays
// checked by `runledger verify` (hashes and chain) and `replay --compare`.
// Pure functions of the events and the clients' records: each appends one
// sentence per problem it finds.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/faults/crash_clients.h"

namespace runledger::testing {

using Problems = std::vector<std::string>;

// Events of the log as served (GET /v1/events?after=, or one stream's
// events), each stream's by version.
class LogWindow {
 public:
  // `after`: the seq the events follow (0: the log from its start).
  LogWindow(uint64_t after, std::vector<nlohmann::json> events);
  uint64_t after() const { return after_; }
  const std::vector<nlohmann::json>& events() const { return events_; }
  // The event at `version` of `stream`; null when the window does not hold it.
  const nlohmann::json* at(const std::string& stream, uint64_t version) const;
  // Whether the window reaches back to `version` of `stream`: holds it,
  // or holds the stream from an earlier version.
  bool covers(const std::string& stream, uint64_t version) const;
  // The stream's latest version in the window; 0 when it holds none.
  uint64_t version_of(const std::string& stream) const;

 private:
  struct Stream {
    uint64_t first_version = 0;
    std::vector<size_t> events;  // index of first_version, first_version + 1, ...
  };
  uint64_t after_;
  std::vector<nlohmann::json> events_;
  std::unordered_map<std::string, Stream> streams_;
};

// What earlier restarts saw of the log, kept small: a digest of each event,
// each stream's latest version, the ids of the commands written.
class LogHistory {
 public:
  uint64_t last_seq() const { return digests_.size(); }
  // The events of `window` past last_seq() are seen now.
  void add(const LogWindow& window);

  static size_t digest(const nlohmann::json& event);
  size_t digest_at(uint64_t seq) const { return digests_[seq - 1]; }
  uint64_t version_of(const std::string& stream) const;
  bool command_written(const std::string& id) const { return commands_.count(id) != 0; }

 private:
  std::vector<size_t> digests_;
  std::unordered_map<std::string, uint64_t> versions_;
  std::unordered_set<std::string> commands_;
};

// The window starts within what was seen, reaches at least as far, and
// every event seen in it is unchanged.
void check_prefix_kept(const LogHistory& seen, const LogWindow& log, Problems* problems);
// The window's seqs run on from its start without a gap; the events new in
// it continue each stream's versions from the last one seen.
void check_gapless(const LogHistory& seen, const LogWindow& log, Problems* problems);
// Grouped by command_id, the commands new in the window each wrote
// contiguous events, in one stream, in exactly one of the groupings the
// deciders write, and none wrote events in an earlier window too: no
// command is half applied, or applied twice.
void check_commands_whole(const LogHistory& seen, const LogWindow& log, Problems* problems);
// Each acknowledged command's last event is in the log at the version its
// reply showed, of the type, attempt, step and sync id it must have, and
// ends its command. `log` must cover each ack's stream at its version.
void check_acks_in_log(const LogWindow& log, std::span<const Ack> acks, Problems* problems);

}  // namespace runledger::testing
