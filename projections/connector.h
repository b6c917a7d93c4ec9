// The connector model (spec: docs/domain.md section 2): entities, commands, the
// pure decider, the fold and the JSON view.
//
// Two independent fields: status (active, paused, error, deleting) and
// sync_status (idle, running). last_error is cleared whenever status becomes
// anything but error. Thread-compatible: only the sequencer touches a State.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "events/event_generated.h"
#include "projections/decision.h"

namespace runledger {
struct State;
}

namespace runledger::connectors {

// The legal exits of each (the fold makes them; connector_commands.h says
// which command each accepts). A sync that started before a pause still
// ends it: a success sets active, a failure error.
enum class Status : uint8_t {
  kActive,   // -> paused (an update), error (SyncFailed), deleting (delete)
  kPaused,   // -> active (an update, SyncSucceeded), error (SyncFailed), deleting (delete)
  kError,    // -> active (an update, SyncSucceeded), paused (an update), deleting (delete)
  kDeleting  // -> the connector is gone (ConnectorDeleted, same command); nothing else
};
enum class SyncStatus : uint8_t {
  kIdle,    // -> running (SyncStarted)
  kRunning  // -> idle (SyncSucceeded, SyncFailed, SyncAborted, SyncLockBroken)
};
enum class DocStatus : uint8_t { kPending, kRunning, kIndexed, kFailed };

const char* to_string(Status s);
const char* to_string(SyncStatus s);
const char* to_string(DocStatus s);
// Parse the names above (query filters, snapshots); nullopt when unknown.
std::optional<Status> status_from(std::string_view s);
std::optional<SyncStatus> sync_status_from(std::string_view s);
std::optional<DocStatus> doc_status_from(std::string_view s);

inline constexpr size_t kLastErrorCodePointsMax = 500;
inline constexpr size_t kNameBytesMax = 256;
inline constexpr size_t kDocumentsPerReportMax = 10000;
inline constexpr int64_t kSyncScheduleSMax = 366LL * 24 * 3600;
inline constexpr size_t kDocumentIdBytesMax = 512;
inline constexpr size_t kDocumentErrorCodePointsMax = 500;
inline constexpr size_t kSyncIdBytesMax = 128;
// How many ended syncs a connector remembers, so a late report can be told
// apart as aborted, superseded or already finished. Older ones answer
// "unknown": still refused, only the reason is less precise.
inline constexpr size_t kEndedSyncsKept = 16;
inline constexpr const char* kAbortedDocumentError = "sync aborted";

// Cuts text to at most `max` Unicode code points, never inside a character.
std::string cut_code_points(std::string_view text, size_t max);

struct Document {
  DocStatus status = DocStatus::kPending;
  std::string error;  // only while failed
  bool operator==(const Document&) const = default;
};

// A sync that is no longer running, and how it ended:
// succeeded | failed | aborted | superseded (its lock was broken).
struct EndedSync {
  std::string sync_id;
  std::string how;
  bool operator==(const EndedSync&) const = default;
};

struct Connector {
  std::string id;
  std::string name;
  Status status = Status::kActive;
  SyncStatus sync_status = SyncStatus::kIdle;
  std::string last_error;  // empty: null
  int64_t last_synced_at_ms = 0;
  int64_t sync_schedule_s = 0;  // 0: no schedule
  int64_t next_slot_ms = 0;     // next schedule slot, 0 when unscheduled
  // Current sync (while running; kept after it ends for `sync_id` fencing).
  std::string sync_id;
  std::string sync_trigger;
  int64_t sync_started_at_ms = 0;
  std::map<std::string, Document> documents;
  // Documents per DocStatus, kept in step with `documents` by the fold so a
  // view of a connector with 100k documents does not walk them.
  std::array<int64_t, 4> document_counts{};
  std::vector<EndedSync> ended_syncs;  // oldest first, at most kEndedSyncsKept
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;  // last event that changed the connector
  uint32_t version = 0;       // stream version of the last event

  bool running() const { return sync_status == SyncStatus::kRunning; }
  bool operator==(const Connector&) const = default;
};

struct ConnectorsState {
  std::map<std::string, Connector, std::less<>> by_id;
  std::set<std::pair<int64_t, std::string>> slots;  // (next_slot_ms, connector)
};

// ---- commands ----
// Deciders check input first (422 invalid_field naming the field), then that
// the connector exists (404 not_found), then the conditions of docs/domain.md 2.1
// in its order (409 with the exact messages, extra {"state", "status",
// "sync_status", "allowed"}; "state" is the status). Setting a field to its
// current value records nothing.
//
// A Create for an id that exists records nothing: with the name and schedule
// the connector has now it is accepted with decision.body {"existing": true};
// with any other it is refused 409 `duplicate_id`.
struct Create {
  std::string id;
  std::string name;
  int64_t sync_schedule_s = 0;
};
struct Update {
  std::string id;
  std::optional<std::string> status;  // "active" | "paused" (others: 422 in the facade)
  std::optional<std::string> name;
  std::optional<int64_t> sync_schedule_s;  // present: set (0 = remove)
};
// Accepted: ConnectorDeletionStarted + ConnectorDeleted in one decision; the
// fold erases the connector, so decision.body holds its view (status
// "deleting") for the reply.
struct Delete {
  std::string id;
};
struct StartSync {
  std::string id;
  std::string sync_id;  // fresh, made by the facade
};
// One SyncAborted however many documents; status is left as it was.
struct AbortSync {
  std::string id;
};
// Reports are fenced by sync_id. From anything but the current running sync:
// a SyncReportIgnored event AND a 409 `stale_sync` refusal (extra "sync_id",
// "reason", "current_sync_id", and "continue": false for progress). Progress
// of the current sync with no documents records nothing (continue).
struct DocumentReport {
  std::vector<std::string> pending, running, indexed;
  std::vector<std::pair<std::string, std::string>> failed;  // id, error
};
struct ReportProgress {
  std::string id;
  std::string sync_id;
  DocumentReport documents;
};
struct ReportSucceeded {
  std::string id;
  std::string sync_id;
  DocumentReport documents;
};
struct ReportFailed {
  std::string id;
  std::string sync_id;
  std::string error;
};
// System: process every schedule slot due at context.now_ms (docs/domain.md 2.4).
// Only the latest due slot of a connector is served; earlier ones it fell
// behind on are recorded as one ScheduleGap. New sync ids: ids->next_id("sync").
struct RunSchedule {};
// System, once at start-up: record slots missed while the engine was down
// as one ScheduleGap per connector and move its schedule past now (2.5).
struct RecordScheduleGaps {};

Decision decide(const State& s, const Create& c, const Context& ctx);
Decision decide(const State& s, const Update& c, const Context& ctx);
Decision decide(const State& s, const Delete& c, const Context& ctx);
Decision decide(const State& s, const StartSync& c, const Context& ctx);
Decision decide(const State& s, const AbortSync& c, const Context& ctx);
Decision decide(const State& s, const ReportProgress& c, const Context& ctx);
Decision decide(const State& s, const ReportSucceeded& c, const Context& ctx);
Decision decide(const State& s, const ReportFailed& c, const Context& ctx);
Decision decide(const State& s, const RunSchedule& c, const Context& ctx);
Decision decide(const State& s, const RecordScheduleGaps& c, const Context& ctx);

// Folds one connector-stream event (ConnectorCreated..ConnectorDeleted) into
// the state, keeping the slot index in step. ConnectorDeleted erases the
// connector. An event for a connector not in memory is ignored.
void evolve(State& s, const fb::Event& e);
// The earliest schedule slot, 0 when no connector is scheduled. The engine
// sends RunSchedule when it is due.
int64_t next_due_ms(const State& s);
// Never true: a deleted connector is erased by the fold; its stream stays in
// the log.
bool finished(const Connector& c);

// The connector as the HTTP API shows it (docs/api.md "A connector in JSON").
nlohmann::json view(const Connector& c);
// The reply body of GET .../documents: {"documents": [{"id","status","error"?}]},
// sorted by id, only those with status `filter` when given.
nlohmann::json documents_view(const Connector& c, std::optional<DocStatus> filter);
// Every field (documents and ended syncs included), for comparing states.
nlohmann::json to_json(const Connector& c);
// Inserts (or replaces) a connector and rebuilds its slot entry.
void adopt(State& s, Connector c);
void evict(State& s, const std::string& id);

}  // namespace runledger::connectors
