// ConnectorClient: syncs, reports, aborts, pauses and resumes one connector;
// see crash_clients.h.
#include "tests/faults/crash_clients.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

int connector_command_status(const std::string& what) {
  if (what == "create") return 201;
  if (what == "sync" || what == "abort") return 202;
  return 200;
}

// The type of the one event each connector command writes
// (projections/connector_decider.cc, connector_reports.cc).
std::set<std::string> connector_command_types(const std::string& what) {
  if (what == "create") return {"ConnectorCreated"};
  if (what == "pause" || what == "resume") return {"ConnectorStatusChanged"};
  if (what == "sync") return {"SyncStarted"};
  if (what == "abort") return {"SyncAborted"};
  if (what == "succeeded") return {"SyncSucceeded"};
  if (what == "failed") return {"SyncFailed"};
  return {};
}

}  // namespace

ConnectorClient::ConnectorClient(int number, uint64_t seed)
    : CrashClient("connector" + std::to_string(number), seed), id_(name() + "-c") {}

SentCommand ConnectorClient::next_command() {
  const std::string stream = "connector/" + id_;
  const std::string path = "/v1/connectors/" + id_;
  const json* conn = view_of(stream);
  if (conn == nullptr) {
    return command("POST", "/v1/connectors", {{"id", id_}, {"name", "crash " + name()}}, "create",
                   stream);
  }
  if (conn->value("status", "") == "paused") {
    return command("PATCH", path, {{"status", "active"}}, "resume", stream);
  }
  if (!conn->value("sync", json()).is_null()) return report(*conn);
  if (chance(kPausePercent)) return command("PATCH", path, {{"status", "paused"}}, "pause", stream);
  return command("POST", path + "/sync", json::object(), "sync", stream);
}

SentCommand ConnectorClient::report(const json& conn) {
  const std::string stream = "connector/" + id_;
  const std::string path = "/v1/connectors/" + id_;
  if (chance(kAbortPercent))
    return command("POST", path + "/sync/abort", json::object(), "abort", stream);
  const std::string sync_id = conn.at("sync").value("sync_id", "");
  const std::string sync_path = path + "/syncs/" + sync_id;
  if (chance(kFailPercent)) {
    return command("POST", sync_path + "/failed", {{"error", "injected failure"}}, "failed",
                   stream);
  }
  json indexed = json::array();
  for (int d = 0; d < kDocumentsPerSync; ++d) {
    indexed.push_back("doc-" + std::to_string(syncs_) + "-" + std::to_string(d));
  }
  json failed = json::array({{{"id", "doc-" + std::to_string(syncs_) + "-bad"}, {"error", "bad"}}});
  return command("POST", sync_path + "/succeeded",
                 {{"documents", {{"indexed", indexed}, {"failed", failed}}}}, "succeeded", stream);
}

void ConnectorClient::on_reply(const SentCommand& c, const ApiReply& r) {
  if (r.status != connector_command_status(c.what) || !r.json.is_object()) {
    problem(c.what + " on " + c.stream + ": " + std::to_string(r.status) + " " + r.body);
    return;
  }
  if (c.what != "sync") {
    ack(c, r.json, connector_command_types(c.what));
    return;
  }
  ++syncs_;
  const json& conn = r.json.at("connector");
  Ack& a = ack(c, conn, connector_command_types(c.what));
  a.sync_id = r.json.value("sync_id", "");
  const json sync = conn.value("sync", json());
  if (!sync.is_object() || sync.value("sync_id", "") != a.sync_id) {
    problem("sync reply names sync " + a.sync_id + " but the connector shows " + conn.dump());
  }
}

}  // namespace runledger::testing
