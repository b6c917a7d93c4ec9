// The OpenAPI 3.1 document, built once from a table of the API's operations
// (docs/api.md is the prose contract). Each operation names its body fields,
// its query parameters and its replies; the schemas of the bodies are in
// http/openapi_schemas.cc. tests/http/openapi_*_test.cc check the table
// against the router, the query rules and real replies.
#include "http/openapi.h"

#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/idempotency.h"
#include "http/openapi_schemas.h"
#include "http/request_entry.h"
#include "projections/connector.h"
#include "projections/hold.h"
#include "projections/job.h"
#include "projections/limits.h"

namespace runledger::http {
namespace {

using nlohmann::json;
using openapi::ref;

struct Field {
  const char* name;
  json schema;
  bool required = false;
};

struct Success {
  int status;
  const char* schema;  // a component schema; nullptr: no body
  const char* description;
};

struct Operation {
  const char* method;
  const char* path;
  const char* operation_id;
  const char* tag;
  const char* summary;
  std::vector<Success> success;
  std::vector<Field> body;  // empty: no body
  // The query parameters (http/query_parameters.cc, checked by the tests).
  std::vector<const char*> query = {};
  bool takes_body = false;  // a POST with no field takes an empty body or {}
};

json str() { return {{"type", "string"}}; }
json str(size_t max_bytes) {
  return {{"type", "string"}, {"minLength", 1}, {"maxLength", max_bytes}};
}
// A text that may be empty, of at most `max_bytes`.
json text(size_t max_bytes) { return {{"type", "string"}, {"maxLength", max_bytes}}; }
json integer(int64_t min, int64_t max) {
  return {{"type", "integer"}, {"minimum", min}, {"maximum", max}};
}
json boolean() { return {{"type", "boolean"}}; }
// 1 to `max_bytes` printable ASCII characters (a header's value).
json printable(size_t max_bytes) {
  return {{"type", "string"}, {"pattern", "^[\\x20-\\x7E]{1," + std::to_string(max_bytes) + "}$"}};
}
json any_json() { return {{"description", "any JSON value"}}; }
json enumeration(std::initializer_list<const char*> values) {
  json e = json::array();
  for (const char* v : values) e.push_back(v);
  return {{"type", "string"}, {"enum", e}};
}
json id() { return openapi::id_schema(); }
json token() {
  return {{"type", "string"},
          {"pattern", "^[0-9a-f]{" + std::to_string(jobs::kLeaseTokenChars) + "}$"},
          {"description", "the lease token the claim or reattach returned"}};
}
// A plan's step names (plan, reuse_on_rerun).
json step_names() {
  return {{"type", "array"},
          {"maxItems", jobs::kPlanStepsMax},
          {"items", str(jobs::kStepNameBytesMax)}};
}
// The kinds a claim asks for.
json kinds() {
  return {{"type", "array"},
          {"maxItems", limits::kKindsPerClaimMax},
          {"items", str(limits::kNameBytesMax)}};
}
json handle() { return printable(jobs::kExecutionHandleCharsMax); }
json hold_kind() { return enumeration({"EXECUTION_STATE_UNKNOWN", "RESULT_UNKNOWN"}); }
json schedule() {
  return {{"type", json::array({"integer", "null"})},
          {"minimum", 1},
          {"maximum", connectors::kSyncScheduleSMax}};
}

constexpr int64_t kMaxLease = 86400 * 366;  // the server's --lease-max-s bounds it further

const std::vector<Operation>& operations() {
  static const std::vector<Operation> ops = {
      // Jobs
      {"post",
       "/v1/jobs",
       "enqueueJob",
       "jobs",
       "Enqueue a job",
       {{201, "Job", "the job"},
        {200, "Job", "the same id posted again with the same body: the job as it is"}},
       {{"id", id()},
        {"kind", str(limits::kNameBytesMax), true},
        {"target", str(limits::kTargetBytesMax), true},
        {"input", any_json()},
        {"plan", step_names()},
        {"reuse_on_rerun", step_names()},
        {"max_attempts", integer(1, jobs::kMaxAttemptsMax)},
        {"priority", integer(-limits::kPriorityAbsMax, limits::kPriorityAbsMax)},
        {"not_before", {{"type", "string"}, {"format", "date-time"}}}}},
      {"get",
       "/v1/jobs",
       "listJobs",
       "jobs",
       "List jobs in id order",
       {{200, "JobPage", "a page of jobs"}},
       {},
       {"state", "target", "kind", "limit", "after"}},
      {"get",
       "/v1/jobs/{id}",
       "getJob",
       "jobs",
       "A job, now or as of an event",
       {{200, "Job", "the job"}},
       {},
       {"as_of"}},
      {"get",
       "/v1/jobs/{id}/events",
       "listJobEvents",
       "jobs",
       "The job's events in version order",
       {{200, "EventPage", "a page of events"}},
       {},
       {"after", "limit"}},
      {"post",
       "/v1/jobs/claim",
       "claimJob",
       "workers",
       "Claim the best ready job, waiting up to wait_s for one",
       {{200, "JobLease", "the job and its lease"},
        {204, nullptr, "nothing ready (after wait_s seconds)"}},
       {{"worker", str(limits::kNameBytesMax), true},
        {"kinds", kinds()},
        {"lease_s", integer(1, kMaxLease)},
        {"wait_s", integer(0, limits::kClaimWaitSMax)}}},
      {"post",
       "/v1/jobs/{id}/heartbeat",
       "heartbeatJob",
       "workers",
       "Extend the lease",
       {{200, "Heartbeat", "the new expiry, and whether a cancel was requested"}},
       {{"lease_token", token(), true}, {"lease_s", integer(1, kMaxLease)}}},
      {"post",
       "/v1/jobs/{id}/release",
       "releaseJob",
       "workers",
       "Give a leased job back",
       {{200, "Job", "the job"}},
       {{"lease_token", token(), true}}},
      {"post",
       "/v1/jobs/{id}/start",
       "startJob",
       "workers",
       "Start the attempt (LEASED to RUNNING)",
       {{200, "Job", "the job"}},
       {{"lease_token", token(), true}, {"execution_handle", handle()}}},
      {"post",
       "/v1/jobs/{id}/steps/{step}/start",
       "startStep",
       "workers",
       "Start a step",
       {{200, "Job", "the job"}},
       {{"lease_token", token(), true}}},
      {"post",
       "/v1/jobs/{id}/steps/{step}/done",
       "finishStep",
       "workers",
       "Finish a step",
       {{200, "Job", "the job"}},
       {{"lease_token", token(), true}, {"output", any_json()}}},
      {"post",
       "/v1/jobs/{id}/steps/{step}/failed",
       "failStep",
       "workers",
       "Fail a step",
       {{200, "Job", "the job"}},
       {{"lease_token", token(), true}, {"error", str(), true}, {"retryable", boolean()}}},
      {"post",
       "/v1/jobs/{id}/cancel",
       "cancelJob",
       "jobs",
       "Cancel the job, or request a cancel of its running attempt",
       {{202, "Job", "the job"}},
       {{"reason", text(jobs::kReasonBytesMax)}},
       {},
       true},
      {"post",
       "/v1/jobs/{id}/cancel-ack",
       "acknowledgeCancel",
       "workers",
       "Acknowledge a cancel request",
       {{200, "Job", "the job, now CANCELLED"}},
       {{"lease_token", token(), true}}},
      {"post",
       "/v1/jobs/{id}/outcome-unknown",
       "reportOutcomeUnknown",
       "workers",
       "Report an unknown outcome (the attempt becomes STALE)",
       {{200, "Job", "the job, now STALE"}},
       {{"lease_token", token(), true}, {"kind", hold_kind(), true}, {"detail", str()}}},
      {"post",
       "/v1/jobs/{id}/reattach",
       "reattachJob",
       "workers",
       "Reattach to or resolve an execution, or one step's observed exit",
       {{200, "JobLease", "the job; the lease for running, and for a step's exit 0"}},
       {{"worker", str(limits::kNameBytesMax), true},
        {"execution_handle", handle(), true},
        {"observed", enumeration({"running", "exited"}), true},
        {"exit_code", integer(INT32_MIN, INT32_MAX)},
        {"step", str(jobs::kStepNameBytesMax)},
        {"output", any_json()},
        {"retryable", boolean()},
        {"lease_s", integer(1, kMaxLease)}}},
      {"post",
       "/v1/jobs/{id}/yield",
       "yieldJob",
       "workers",
       "Hand a running attempt back between steps (its next attempt is QUEUED)",
       {{200, "Job", "the job"}},
       {{"lease_token", token(), true}, {"reason", text(jobs::kReasonBytesMax)}}},
      {"post",
       "/v1/jobs/{id}/rerun",
       "rerunJob",
       "jobs",
       "Rerun a finished job",
       {{201, "Job", "the job with its new attempt"}},
       {{"reason", text(jobs::kReasonBytesMax)}},
       {},
       true},
      // Connectors
      {"post",
       "/v1/connectors",
       "createConnector",
       "connectors",
       "Create a connector",
       {{201, "Connector", "the connector"},
        {200, "Connector", "the same id posted again with the same body: the connector as it is"}},
       {{"id", id()},
        {"name", str(connectors::kNameBytesMax), true},
        {"sync_schedule_s", schedule()}}},
      {"get",
       "/v1/connectors",
       "listConnectors",
       "connectors",
       "List connectors in id order",
       {{200, "ConnectorPage", "a page of connectors"}},
       {},
       {"status", "sync_status", "limit", "after"}},
      {"get",
       "/v1/connectors/{id}",
       "getConnector",
       "connectors",
       "A connector, now or as of an event",
       {{200, "Connector", "the connector"}},
       {},
       {"as_of"}},
      {"patch",
       "/v1/connectors/{id}",
       "updateConnector",
       "connectors",
       "Update status, name or schedule",
       {{200, "Connector", "the connector"}},
       {{"status", enumeration({"active", "paused"})},
        {"name", str(connectors::kNameBytesMax)},
        {"sync_schedule_s", schedule()}}},
      {"delete",
       "/v1/connectors/{id}",
       "deleteConnector",
       "connectors",
       "Delete a connector",
       {{202, "Connector", "the connector, status deleting"}},
       {}},
      {"post",
       "/v1/connectors/{id}/sync",
       "startSync",
       "connectors",
       "Start a manual sync",
       {{202, "SyncStarted", "the sync's id and the connector"}},
       {},
       {},
       true},
      {"post",
       "/v1/connectors/{id}/sync/abort",
       "abortSync",
       "connectors",
       "Abort the running sync",
       {{202, "Connector", "the connector"}},
       {},
       {},
       true},
      {"post",
       "/v1/connectors/{id}/syncs/{sync_id}/progress",
       "reportSyncProgress",
       "sync reports",
       "Report a sync's progress",
       {{200, "SyncProgress", "go on"}},
       {{"documents", ref("DocumentsReport")}},
       {},
       true},
      {"post",
       "/v1/connectors/{id}/syncs/{sync_id}/succeeded",
       "reportSyncSucceeded",
       "sync reports",
       "Report a sync's success",
       {{200, "Connector", "the connector"}},
       {{"documents", ref("DocumentsReport")}},
       {},
       true},
      {"post",
       "/v1/connectors/{id}/syncs/{sync_id}/failed",
       "reportSyncFailed",
       "sync reports",
       "Report a sync's failure",
       {{200, "Connector", "the connector"}},
       {{"error", str(), true}}},
      {"get",
       "/v1/connectors/{id}/documents",
       "listConnectorDocuments",
       "connectors",
       "The connector's documents in id order",
       {{200, "Documents", "the documents"}},
       {},
       {"status"}},
      {"get",
       "/v1/connectors/{id}/events",
       "listConnectorEvents",
       "connectors",
       "The connector's events in version order, also once it is deleted",
       {{200, "EventPage", "a page of events"}},
       {},
       {"after", "limit"}},
      // Holds and the gate
      {"post",
       "/v1/holds",
       "placeHold",
       "holds",
       "Place a hold on a target",
       {{201, "Hold", "the hold"}},
       {{"target", str(limits::kTargetBytesMax), true},
        {"kind", hold_kind(), true},
        {"reason", str(holds::kReasonBytesMax), true},
        {"job", id()}}},
      {"get",
       "/v1/holds",
       "listHolds",
       "holds",
       "List holds in id order",
       {{200, "HoldPage", "a page of holds"}},
       {},
       {"target", "open", "limit", "after"}},
      {"get",
       "/v1/holds/{id}",
       "getHold",
       "holds",
       "A hold, now or as of an event",
       {{200, "Hold", "the hold"}},
       {},
       {"as_of"}},
      {"get",
       "/v1/holds/{id}/events",
       "listHoldEvents",
       "holds",
       "The hold's events in version order",
       {{200, "EventPage", "a page of events"}},
       {},
       {"after", "limit"}},
      {"post",
       "/v1/holds/{id}/release",
       "releaseHold",
       "holds",
       "Release a hold with evidence",
       {{200, "Hold", "the hold"}},
       {{"note", str(holds::kNoteBytesMax), true},
        {"execution_stopped", boolean()},
        {"outcome", enumeration({"SUCCEEDED", "FAILED"})}}},
      {"get",
       "/v1/targets/{target}/gate",
       "getGate",
       "holds",
       "May new work start on the target?",
       {{200, "Gate", "the gate"}},
       {}},
      // Events
      {"get",
       "/v1/events",
       "listEvents",
       "events",
       "The global log in seq order",
       {{200, "EventPage", "a page of events"}},
       {},
       {"after", "limit", "stream", "type", "since"}},
      {"get",
       "/v1/events/live",
       "streamEvents",
       "events",
       "The log as Server-Sent Events",
       {{200, nullptr, "a text/event-stream of events"}},
       {},
       {"after"}},
      // Operations
      {"get",
       "/v1/health",
       "getHealth",
       "operations",
       "200 when the engine can write, or on a cluster's standby while it follows the log",
       {{200, "Health", "the engine can write (a standby: it follows the log)"}},
       {}},
      {"get",
       "/v1/health/leader",
       "getHealthLeader",
       "operations",
       "200 only on the node that takes writes (for load balancers)",
       {{200, "HealthLeader", "this node leads and can write"}},
       {}},
      {"get",
       "/v1/whoami",
       "whoAmI",
       "operations",
       "The caller's name and role",
       {{200, "WhoAmI", "the caller"}},
       {}},
      {"get",
       "/metrics",
       "getMetrics",
       "operations",
       "Prometheus metrics",
       {{200, nullptr, "the Prometheus text format"}},
       {}},
      {"get",
       "/v1/openapi.json",
       "getOpenApi",
       "operations",
       "This document",
       {{200, nullptr, "the OpenAPI document"}},
       {}},
  };
  return ops;
}

// The query parameters' schemas and meanings (docs/api.md).
json query_parameter(const std::string& path, const char* name) {
  json schema = str();
  std::string description;
  const std::string n = name;
  if (n == "limit") {
    const bool log = path == "/v1/events" || path.ends_with("/events");
    schema = {{"type", "integer"}, {"minimum", 1}, {"maximum", log ? 10000 : 1000}};
    description = "at most this many items";
  } else if (n == "after") {
    if (path.ends_with("/events") || path == "/v1/events/live") {
      schema = {{"type", "integer"}, {"minimum", 0}};
      description = path.starts_with("/v1/events")
                        ? "start after this seq (next_after of the previous page)"
                        : "start after this stream version (next_after of the previous page)";
    } else {
      schema = id();
      description = "the next of the previous page";
    }
  } else if (n == "as_of") {
    schema = {{"type", "integer"}, {"minimum", 1}};
    description = "the entity as it was right after this event's seq";
  } else if (n == "open") {
    schema = {{"type", "string"}, {"enum", {"true", "false"}}};
    description = "open holds only (true) or released ones only (false)";
  } else if (n == "since") {
    schema = {{"type", "string"}, {"format", "date-time"}};
    description = "start at the first event recorded at or after this time";
  } else if (n == "type") {
    schema = {{"type", "array"}, {"items", str()}};
    description = "an event type; repeat it for several";
  } else if (n == "stream") {
    description = "an exact stream (job/<id>) or a kind (job/, connector/, hold/)";
  } else if (n == "state") {
    schema = {
        {"type", "string"},
        {"enum",
         {"QUEUED", "LEASED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED", "STALE", "YIELDED"}}};
    description = "the latest attempt's state";
  } else if (n == "status") {
    if (path == "/v1/connectors") {
      schema = {{"type", "string"}, {"enum", {"active", "paused", "error", "deleting"}}};
      description = "the connector's status";
    } else {
      schema = {{"type", "string"}, {"enum", {"pending", "running", "indexed", "failed"}}};
      description = "the document's status";
    }
  } else if (n == "sync_status") {
    schema = {{"type", "string"}, {"enum", {"idle", "running"}}};
    description = "the connector's sync status";
  } else {
    description = "only those with this " + n;
  }
  json p = {{"name", name},
            {"in", "query"},
            {"required", false},
            {"description", description},
            {"schema", schema}};
  if (n == "type") {
    p["style"] = "form";
    p["explode"] = true;
  }
  return p;
}

json error_response(const char* description, bool retry_after = false) {
  json r = {{"description", description},
            {"content", {{"application/json", {{"schema", ref("Error")}}}}}};
  if (retry_after) {
    json header = {{"description", "seconds to wait before trying again"},
                   {"schema", {{"type", "integer"}}}};
    r["headers"] = {{"Retry-After", header}};
  }
  return r;
}

json components(const json& schemas) {
  json responses = {
      {"BadRequest", error_response("the body is not a JSON object, or the request is unreadable")},
      {"Unauthorized", error_response("authentication is on and no valid bearer token was sent")},
      {"Forbidden", error_response("the token's role may not make this call, or a foreign Origin")},
      {"NotFound", error_response("no such entity")},
      {"Conflict", error_response("the state, the lease, an id or an Idempotency-Key conflicts "
                                  "(`code` says which)")},
      {"PayloadTooLarge", error_response("the body is larger than --body-limit-bytes")},
      {"UnsupportedMediaType", error_response("a body that is not application/json")},
      {"Unprocessable",
       error_response("a missing, mistyped, unknown or twice-given field or query parameter "
                      "(`field` names it)")},
      {"Unavailable",
       error_response("the engine cannot write, the server is overloaded, or (`not_leader`, with "
                      "the leader's URL in `leader`) this node of a cluster is a standby: nothing "
                      "changed",
                      true)},
  };
  auto header = [](const char* name, const char* description, json schema) {
    return json{{"name", name},
                {"in", "header"},
                {"required", false},
                {"description", description},
                {"schema", std::move(schema)}};
  };
  json parameters = {
      {"IdempotencyKey",
       header("Idempotency-Key",
              "a repeat of the same request under this key gets the first reply and changes "
              "nothing",
              printable(kIdempotencyKeyBytesMax))},
      {"Actor",
       header("X-Runledger-Actor", "who acts, with authentication off (the token's name otherwise)",
              printable(kActorBytesMax))},
      {"LastEventId", header("Last-Event-ID", "resume after this seq (wins over `after`)",
                             {{"type", "integer"}, {"minimum", 0}})},
  };
  return {{"schemas", schemas},
          {"responses", responses},
          {"parameters", parameters},
          {"securitySchemes",
           {{"bearer",
             {{"type", "http"},
              {"scheme", "bearer"},
              {"description",
               "A token of --auth-tokens; its role (reader, worker, operator) decides what it "
               "may call. Not needed when authentication is off."}}}}}};
}

json response_ref(const char* name) {
  return {{"$ref", std::string("#/components/responses/") + name}};
}

json build() {
  json doc = {
      {"openapi", "3.1.0"},
      {"info",
       {{"title", "runledger"},
        {"version", "1"},
        {"summary", "Event-sourced state engine for data jobs and connectors"},
        {"description",
         "The HTTP API of runledgerd. docs/api.md is its full contract: limits, conventions "
         "and the meaning of each error code."},
        {"license", {{"name", "Apache-2.0"}, {"identifier", "Apache-2.0"}}}}},
      {"servers",
       json::array({{{"url", "http://127.0.0.1:8080"}, {"description", "a local runledgerd"}}})},
      {"security", json::array({{{"bearer", json::array()}}})},
      {"tags", json::array()},
      {"components", components(openapi::component_schemas())},
      {"paths", json::object()}};
  const std::vector<std::pair<const char*, const char*>> tags = {
      {"jobs", "Enqueue, read, cancel and rerun jobs"},
      {"workers", "The calls a worker makes on the jobs it runs"},
      {"connectors", "Connectors and their syncs"},
      {"sync reports", "The reports of a connector's sync loop"},
      {"holds", "Holds on targets and the gate"},
      {"events", "The event log"},
      {"operations", "Health, identity, metrics and this document"},
  };
  for (const auto& [name, description] : tags) {
    doc["tags"].push_back({{"name", name}, {"description", description}});
  }
  for (const auto& op : operations()) {
    const std::string path = op.path;
    const std::string method = op.method;
    const bool command = method != "get";
    json o = {{"operationId", op.operation_id},
              {"summary", op.summary},
              {"description", std::string(op.summary) + " (docs/api.md)."},
              {"tags", {op.tag}}};
    json params = json::array();
    for (size_t i = path.find('{'); i != std::string::npos; i = path.find('{', i + 1)) {
      std::string name = path.substr(i + 1, path.find('}', i) - i - 1);
      json schema = name == "id" || name == "sync_id" ? id() : str();
      std::string description = name == "target"    ? "the target, percent-encoded"
                                : name == "step"    ? "a step of the job's plan"
                                : name == "sync_id" ? "the sync's id"
                                                    : "the entity's id";
      params.push_back({{"name", name},
                        {"in", "path"},
                        {"required", true},
                        {"description", description},
                        {"schema", schema}});
    }
    for (const char* q : op.query) params.push_back(query_parameter(path, q));
    if (command) {
      params.push_back({{"$ref", "#/components/parameters/IdempotencyKey"}});
      params.push_back({{"$ref", "#/components/parameters/Actor"}});
    }
    if (path == "/v1/events/live") {
      params.push_back({{"$ref", "#/components/parameters/LastEventId"}});
    }
    if (!params.empty()) o["parameters"] = params;
    if (!op.body.empty()) {
      json props = json::object();
      json required = json::array();
      for (const Field& f : op.body) {
        props[f.name] = f.schema;
        if (f.required) required.push_back(f.name);
      }
      json schema = {{"type", "object"}, {"properties", props}, {"additionalProperties", false}};
      if (!required.empty()) schema["required"] = required;
      o["requestBody"] = {{"required", !required.empty() && !op.takes_body},
                          {"content", {{"application/json", {{"schema", schema}}}}}};
    }
    json responses = json::object();
    for (const Success& s : op.success) {
      json r = {{"description", s.description}};
      if (s.schema != nullptr) {
        r["content"] = {{"application/json", {{"schema", ref(s.schema)}}}};
      } else if (path == "/v1/events/live") {
        r["content"] = {{"text/event-stream", {{"schema", str()}}}};
      } else if (path == "/metrics") {
        r["content"] = {{"text/plain", {{"schema", str()}}}};
      } else if (path == "/v1/openapi.json") {
        r["content"] = {{"application/json", {{"schema", {{"type", "object"}}}}}};
      }
      responses[std::to_string(s.status)] = r;
    }
    const bool has_id = path.find('{') != std::string::npos;
    if (command) responses["400"] = response_ref("BadRequest");
    const bool health = path == "/v1/health" || path == "/v1/health/leader";
    if (!health) {
      responses["401"] = response_ref("Unauthorized");
      responses["403"] = response_ref("Forbidden");
    }
    if (has_id) responses["404"] = response_ref("NotFound");
    if (command) {
      responses["409"] = response_ref("Conflict");
      responses["413"] = response_ref("PayloadTooLarge");
      responses["415"] = response_ref("UnsupportedMediaType");
    }
    // Every route refuses a query parameter it does not take (422 invalid_query).
    responses["422"] = response_ref("Unprocessable");
    responses["503"] = response_ref("Unavailable");
    if (path == "/v1/health") {
      o["security"] = json::array();
      responses["503"] = error_response(
          "the engine cannot write, or a standby does not follow the log (`status`: unavailable)",
          true);
    }
    if (path == "/v1/health/leader") {
      o["security"] = json::array();
      responses["503"] =
          error_response("this node does not lead (`not_leader`) or cannot write", true);
    }
    o["responses"] = responses;
    doc["paths"][path][method] = o;
  }
  return doc;
}

}  // namespace

const std::string& openapi_document() {
  static const std::string doc = build().dump();
  return doc;
}

}  // namespace runledger::http
