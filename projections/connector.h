// The connector model (spec: domain.md section 2): entities, commands, the
// pure decider, the fold and the JSON view.
//
// Two independent fields: status (active, paused, error, deleting) and
// sync_status (idle, running). last_error is cleared whenever status becomes
// anything but error. Thread-compatible: only the sequencer touches a State.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "events/event_generated.h"
#include "projections/decision.h"

namespace runledger {
struct State;
}

namespace runledger::connectors {

enum class Status : uint8_t { kActive, kPaused, kError, kDeleting };
enum class SyncStatus : uint8_t { kIdle, kRunning };
enum class DocStatus : uint8_t { kPending, kRunning, kIndexed, kFailed };

const char* to_string(Status s);
const char* to_string(SyncStatus s);
const char* to_string(DocStatus s);

inline constexpr size_t kLastErrorCodePointsMax = 500;
inline constexpr size_t kNameBytesMax = 256;
inline constexpr size_t kDocumentsPerReportMax = 10000;
inline constexpr int64_t kSyncScheduleSMax = 366LL * 24 * 3600;

// Cuts text to at most `max` Unicode code points, never inside a character.
std::string cut_code_points(std::string_view text, size_t max);

struct Document {
  DocStatus status = DocStatus::kPending;
  std::string error;
};

struct Connector {
  std::string id;
  std::string name;
  Status status = Status::kActive;
  SyncStatus sync_status = SyncStatus::kIdle;
  std::string last_error;         // empty: null
  int64_t last_synced_at_ms = 0;
  int64_t sync_schedule_s = 0;    // 0: no schedule
  int64_t next_slot_ms = 0;       // next schedule slot, 0 when unscheduled
  // Current sync (while running; kept after it ends for `sync_id` fencing).
  std::string sync_id;
  std::string sync_trigger;
  int64_t sync_started_at_ms = 0;
  std::map<std::string, Document> documents;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  uint32_t version = 0;
};

struct ConnectorsState {
  std::map<std::string, Connector> by_id;
  std::set<std::pair<int64_t, std::string>> slots;  // (next_slot_ms, connector)
};

// ---- commands ----
struct Create {
  std::string id;
  std::string name;
  int64_t sync_schedule_s = 0;
};
struct Update {
  std::string id;
  std::optional<std::string> status;     // "active" | "paused" (others: 422 in the facade)
  std::optional<std::string> name;
  std::optional<int64_t> sync_schedule_s;  // present: set (0 = remove)
};
struct Delete {
  std::string id;
};
struct StartSync {
  std::string id;
  std::string sync_id;   // fresh, made by the facade
};
struct AbortSync {
  std::string id;
};
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
// System: process every schedule slot due at context.now_ms (domain.md 2.4).
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

void evolve(State& s, const fb::Event& e);
int64_t next_due_ms(const State& s);
// A deleted connector leaves memory; its stream stays in the log.
bool finished(const Connector& c);

nlohmann::json view(const Connector& c);
nlohmann::json documents_view(const Connector& c, std::optional<DocStatus> filter);
nlohmann::json to_json(const Connector& c);
Connector from_json(const nlohmann::json& j);
void adopt(State& s, Connector c);
void evict(State& s, const std::string& id);

}  // namespace runledger::connectors
