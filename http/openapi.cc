// The OpenAPI 3 document, built once from a table of the API's operations.
// Bodies are described by their fields; docs/api.md is the full contract.
#include "http/openapi.h"

#include <nlohmann/json.hpp>

namespace runledger::http {
namespace {

struct Operation {
  const char* method;
  const char* path;
  const char* summary;
  int success;
  std::vector<const char*> body_fields;  // empty: no body
  // A create posted again with the same body: 200 and the entity as it is.
  bool repeatable_create = false;
};

const std::vector<Operation>& operations() {
  static const std::vector<Operation> ops = {
      {"post",
       "/v1/connectors",
       "Create a connector",
       201,
       {"id", "name", "sync_schedule_s"},
       /*repeatable_create=*/true},
      {"get", "/v1/connectors", "List connectors (filters: status, sync_status)", 200, {}},
      {"get", "/v1/connectors/{id}", "A connector (as_of: seq)", 200, {}},
      {"patch",
       "/v1/connectors/{id}",
       "Update status, name or schedule",
       200,
       {"status", "name", "sync_schedule_s"}},
      {"delete", "/v1/connectors/{id}", "Delete a connector", 202, {}},
      {"post", "/v1/connectors/{id}/sync", "Start a manual sync", 202, {}},
      {"post", "/v1/connectors/{id}/sync/abort", "Abort the running sync", 202, {}},
      {"post",
       "/v1/connectors/{id}/syncs/{sync_id}/progress",
       "Report progress",
       200,
       {"documents"}},
      {"post",
       "/v1/connectors/{id}/syncs/{sync_id}/succeeded",
       "Report success",
       200,
       {"documents"}},
      {"post", "/v1/connectors/{id}/syncs/{sync_id}/failed", "Report failure", 200, {"error"}},
      {"get", "/v1/connectors/{id}/documents", "List documents (filter: status)", 200, {}},
      {"get", "/v1/connectors/{id}/events", "The connector's events (after, limit)", 200, {}},
      {"post",
       "/v1/jobs",
       "Enqueue a job",
       201,
       {"id", "kind", "target", "input", "plan", "reuse_on_rerun", "max_attempts", "priority",
        "not_before"},
       /*repeatable_create=*/true},
      {"get", "/v1/jobs", "List jobs (state, target, kind, limit, after)", 200, {}},
      {"get", "/v1/jobs/{id}", "A job (as_of: seq)", 200, {}},
      {"post",
       "/v1/jobs/claim",
       "Claim the best ready job, waiting up to wait_s for one (204: none)",
       200,
       {"worker", "kinds", "lease_s", "wait_s"}},
      {"post", "/v1/jobs/{id}/heartbeat", "Extend the lease", 200, {"lease_token", "lease_s"}},
      {"post", "/v1/jobs/{id}/release", "Give a leased job back", 200, {"lease_token"}},
      {"post",
       "/v1/jobs/{id}/start",
       "Start (LEASED -> RUNNING)",
       200,
       {"lease_token", "execution_handle"}},
      {"post", "/v1/jobs/{id}/steps/{step}/start", "Start a step", 200, {"lease_token"}},
      {"post", "/v1/jobs/{id}/steps/{step}/done", "Finish a step", 200, {"lease_token", "output"}},
      {"post",
       "/v1/jobs/{id}/steps/{step}/failed",
       "Fail a step",
       200,
       {"lease_token", "error", "retryable"}},
      {"post", "/v1/jobs/{id}/cancel", "Cancel (or request cancel)", 202, {"reason"}},
      {"post", "/v1/jobs/{id}/cancel-ack", "Acknowledge a cancel request", 200, {"lease_token"}},
      {"post",
       "/v1/jobs/{id}/outcome-unknown",
       "Report an unknown outcome (-> STALE)",
       200,
       {"lease_token", "kind", "detail"}},
      {"post",
       "/v1/jobs/{id}/reattach",
       "Reattach to or resolve an execution, or one step's observed exit",
       200,
       {"worker", "execution_handle", "observed", "exit_code", "step", "output", "retryable",
        "lease_s"}},
      {"post",
       "/v1/jobs/{id}/yield",
       "Hand a running attempt back between steps (-> YIELDED, next attempt QUEUED)",
       200,
       {"lease_token", "reason"}},
      {"post", "/v1/jobs/{id}/rerun", "Rerun a finished job", 201, {"reason"}},
      {"get", "/v1/jobs/{id}/events", "The job's events (after, limit)", 200, {}},
      {"get", "/v1/holds", "List holds (target, open)", 200, {}},
      {"get", "/v1/holds/{id}", "A hold (as_of: seq)", 200, {}},
      {"post", "/v1/holds", "Place a hold", 201, {"target", "kind", "reason", "job"}},
      {"post",
       "/v1/holds/{id}/release",
       "Release a hold with evidence",
       200,
       {"note", "execution_stopped", "outcome"}},
      {"get", "/v1/holds/{id}/events", "The hold's events (after, limit)", 200, {}},
      {"get", "/v1/targets/{target}/gate", "May new work start on the target?", 200, {}},
      {"get", "/v1/events", "The global log (after, limit, stream, type, since)", 200, {}},
      {"get", "/v1/events/live", "The log as Server-Sent Events", 200, {}},
      {"get", "/v1/health", "200 when the engine can write", 200, {}},
      {"get", "/v1/whoami", "The caller's name and role", 200, {}},
      {"get", "/metrics", "Prometheus metrics", 200, {}},
      {"get", "/v1/openapi.json", "This document", 200, {}},
  };
  return ops;
}

nlohmann::json build() {
  nlohmann::json error_schema = {
      {"type", "object"},
      {"required", {"error", "code"}},
      {"properties", {{"error", {{"type", "string"}}}, {"code", {{"type", "string"}}}}}};
  nlohmann::json doc = {
      {"openapi", "3.0.3"},
      {"info",
       {{"title", "runledger"},
        {"version", "1"},
        {"description", "Event-sourced state engine for data jobs and connectors."}}},
      {"components", {{"schemas", {{"Error", error_schema}}}}},
      {"paths", nlohmann::json::object()}};
  for (const auto& op : operations()) {
    nlohmann::json o;
    o["summary"] = op.summary;
    nlohmann::json params = nlohmann::json::array();
    std::string path = op.path;
    for (size_t i = path.find('{'); i != std::string::npos; i = path.find('{', i + 1)) {
      std::string name = path.substr(i + 1, path.find('}', i) - i - 1);
      params.push_back(
          {{"name", name}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}});
    }
    if (!params.empty()) o["parameters"] = params;
    if (!op.body_fields.empty()) {
      nlohmann::json props = nlohmann::json::object();
      for (const char* f : op.body_fields) props[f] = nlohmann::json::object();
      o["requestBody"] = {
          {"content",
           {{"application/json",
             {{"schema",
               {{"type", "object"}, {"properties", props}, {"additionalProperties", false}}}}}}}};
    }
    nlohmann::json err = {
        {"description", "error"},
        {"content",
         {{"application/json", {{"schema", {{"$ref", "#/components/schemas/Error"}}}}}}}};
    o["responses"] = {{std::to_string(op.success), {{"description", "success"}}}, {"default", err}};
    if (op.repeatable_create) {
      o["responses"]["200"] = {{"description", "the same body posted again: nothing changed"}};
    }
    doc["paths"][op.path][op.method] = o;
  }
  return doc;
}

}  // namespace

const std::string& openapi_document() {
  static const std::string doc = build().dump();
  return doc;
}

}  // namespace runledger::http
