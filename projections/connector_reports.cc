// The connector decider for reports from a sync loop (docs/domain.md 2.3),
// fenced by sync_id: only the connector's current running sync may change
// it. A report from any other sync (aborted, superseded, finished, unknown)
// is recorded as SyncReportIgnored and refused with 409 `stale_sync`; for a
// progress report the refusal carries "continue": false, the loop's cue to
// stop before its next page.
#include <fmt/format.h>

#include "projections/connector.h"
#include "projections/connector_internal.h"
#include "projections/state.h"

namespace runledger::connectors {

using internal::find;
using internal::not_found;

namespace {

constexpr const char* kUnknownSync = "unknown";
constexpr const char* kDefaultSyncError = "sync failed";

bool is_current(const Connector& c, const std::string& sync_id) {
  return c.running() && c.sync_id == sync_id;
}

// How the sync ended, as the connector remembers it.
std::string stale_reason(const Connector& c, const std::string& sync_id) {
  for (auto it = c.ended_syncs.rbegin(); it != c.ended_syncs.rend(); ++it) {
    if (it->sync_id == sync_id) return it->how;
  }
  return kUnknownSync;
}

// Recorded, so forensics can see the report arrived, and refused, so the
// caller learns its sync is over. The event changes no state.
Decision ignore(const Connector& c, const std::string& sync_id, const char* report) {
  std::string reason = stale_reason(c, sync_id);
  nlohmann::json extra = {{"sync_id", sync_id},
                          {"reason", reason},
                          {"current_sync_id", c.running() ? nlohmann::json(c.sync_id) : nullptr}};
  if (std::string_view(report) == "progress") extra["continue"] = false;
  Decision d = Decision::reject(
      RejectionCode::kStaleSync,
      fmt::format("Sync {} is not the current sync ({})", sync_id, reason), std::move(extra));
  fb::SyncReportIgnoredT ignored;
  ignored.sync_id = sync_id;
  ignored.report = report;
  ignored.reason = std::move(reason);
  d.emit(connector_stream(c.id), std::move(ignored));
  return d;
}

}  // namespace

Decision decide(const State& s, const ReportProgress& c, const Context&) {
  if (auto bad = internal::check_documents(c.documents)) return std::move(*bad);
  const Connector* conn = find(s, c.id);
  if (conn == nullptr) return not_found(c.id);
  if (!is_current(*conn, c.sync_id)) return ignore(*conn, c.sync_id, "progress");
  Decision d;
  if (internal::empty(c.documents)) return d;  // a plain "may I continue?"
  fb::SyncProgressedT progressed;
  progressed.sync_id = c.sync_id;
  progressed.documents = internal::to_changes(c.documents);
  d.emit(connector_stream(c.id), std::move(progressed));
  return d;
}

Decision decide(const State& s, const ReportSucceeded& c, const Context&) {
  if (auto bad = internal::check_documents(c.documents)) return std::move(*bad);
  const Connector* conn = find(s, c.id);
  if (conn == nullptr) return not_found(c.id);
  if (!is_current(*conn, c.sync_id)) return ignore(*conn, c.sync_id, "succeeded");
  fb::SyncSucceededT succeeded;
  succeeded.sync_id = c.sync_id;
  succeeded.documents = internal::to_changes(c.documents);
  Decision d;
  d.emit(connector_stream(c.id), std::move(succeeded));
  return d;
}

// The text is cut here, before it is logged: the log never holds more than
// the connector keeps (a 1 MB stack trace becomes 500 code points).
Decision decide(const State& s, const ReportFailed& c, const Context&) {
  const Connector* conn = find(s, c.id);
  if (conn == nullptr) return not_found(c.id);
  if (!is_current(*conn, c.sync_id)) return ignore(*conn, c.sync_id, "failed");
  fb::SyncFailedT failed;
  failed.sync_id = c.sync_id;
  failed.error = c.error.empty() ? std::string(kDefaultSyncError)
                                 : cut_code_points(c.error, kLastErrorCodePointsMax);
  Decision d;
  d.emit(connector_stream(c.id), std::move(failed));
  return d;
}

}  // namespace runledger::connectors
