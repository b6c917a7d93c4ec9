// The bodies of the API as JSON Schema (OpenAPI 3.1), from the field lists of
// projections/job_view.cc, connector_view.cc, hold_json.cc, hold_gate.cc,
// events/event_codec.cc and the route handlers (docs/api.md). Replies are
// closed (additionalProperties false) so that a field a view gains and this
// file lacks fails the reply checks (tests/http/openapi_replies_test.cc and
// scripts/openapi-check.sh).
#include "http/openapi_schemas.h"

#include <initializer_list>
#include <string>
#include <utility>

#include "projections/connector.h"
#include "projections/limits.h"

namespace runledger::http::openapi {
namespace {

using nlohmann::json;

json str() { return {{"type", "string"}}; }
json str(int min_len, int max_len) {
  return {{"type", "string"}, {"minLength", min_len}, {"maxLength", max_len}};
}
json integer() { return {{"type", "integer"}}; }
json boolean() { return {{"type", "boolean"}}; }
json time() { return {{"type", "string"}, {"format", "date-time"}}; }
json any_json() { return json::object(); }
json nullable(json s) {
  if (s.contains("type") && s["type"].is_string()) {
    s["type"] = json::array({s["type"], "null"});
    if (s.contains("enum")) s["enum"].push_back(nullptr);
    return s;
  }
  return {{"oneOf", json::array({std::move(s), {{"type", "null"}}})}};
}
json one_of_strings(std::initializer_list<const char*> values) {
  json e = json::array();
  for (const char* v : values) e.push_back(v);
  return {{"type", "string"}, {"enum", e}};
}
json array_of(json items) { return {{"type", "array"}, {"items", std::move(items)}}; }

// A closed object: `fields` are its properties, `required` those always there.
json object(std::initializer_list<std::pair<const char*, json>> fields,
            std::initializer_list<const char*> required, const char* description = nullptr) {
  json props = json::object();
  for (const auto& [name, schema] : fields) props[name] = schema;
  json o = {{"type", "object"}, {"properties", props}, {"additionalProperties", false}};
  if (required.size() > 0) {
    json r = json::array();
    for (const char* name : required) r.push_back(name);
    o["required"] = r;
  }
  if (description != nullptr) o["description"] = description;
  return o;
}

}  // namespace

json id_schema() {
  const std::string bound = std::to_string(limits::kIdBytesMax);
  return {{"type", "string"},
          {"pattern", "^[A-Za-z0-9._:-]{1," + bound + "}$"},
          {"description", "1-" + bound + " characters of A-Z a-z 0-9 . _ : -"}};
}

namespace {

json attempt_state() {
  return one_of_strings(
      {"QUEUED", "LEASED", "RUNNING", "SUCCEEDED", "FAILED", "CANCELLED", "STALE", "YIELDED"});
}

json job() {
  json step = object({{"name", str()},
                      {"state", one_of_strings({"PENDING", "RUNNING", "DONE", "FAILED", "REUSED",
                                                "UNKNOWN", "CANCELLED"})},
                      {"started_at", nullable(time())},
                      {"finished_at", nullable(time())},
                      {"output", any_json()},
                      {"error", str()},
                      {"reused_from", integer()}},
                     {"name", "state", "started_at", "finished_at"});
  json attempt = object({{"attempt", integer()},
                         {"state", attempt_state()},
                         {"started_at", nullable(time())},
                         {"finished_at", nullable(time())},
                         {"error", str()}},
                        {"attempt", "state", "started_at", "finished_at"});
  json lease =
      object({{"worker", str()}, {"expires_at", nullable(time())}}, {"worker", "expires_at"});
  json blocked_by = nullable({{"oneOf", json::array({object({{"job", str()}}, {"job"}),
                                                     object({{"hold", str()}}, {"hold"})})}});
  blocked_by["description"] =
      "What keeps a QUEUED job from starting: a job or a hold on its target";
  return object({{"id", id_schema()},
                 {"kind", str()},
                 {"target", str()},
                 {"input", any_json()},
                 {"plan", array_of(str())},
                 {"reuse_on_rerun", array_of(str())},
                 {"max_attempts", integer()},
                 {"priority", integer()},
                 {"state", attempt_state()},
                 {"attempt", integer()},
                 {"client_token", str()},
                 {"lease", nullable(lease)},
                 {"cancel_requested", boolean()},
                 {"cancel_reason", nullable(str())},
                 {"execution_handle", nullable(str())},
                 {"steps", array_of(step)},
                 {"last_completed_step", nullable(str())},
                 {"cleanup_needed", boolean()},
                 {"error", nullable(str())},
                 {"blocked_by", blocked_by},
                 {"attempts", array_of(attempt)},
                 {"created_at", nullable(time())},
                 {"updated_at", nullable(time())},
                 {"version", integer()}},
                {"id",
                 "kind",
                 "target",
                 "input",
                 "plan",
                 "reuse_on_rerun",
                 "max_attempts",
                 "priority",
                 "state",
                 "attempt",
                 "client_token",
                 "lease",
                 "cancel_requested",
                 "cancel_reason",
                 "execution_handle",
                 "steps",
                 "last_completed_step",
                 "cleanup_needed",
                 "error",
                 "blocked_by",
                 "attempts",
                 "created_at",
                 "updated_at",
                 "version"},
                "A job and its latest attempt (docs/api.md, Jobs)");
}

json connector() {
  json sync = object({{"sync_id", str()}, {"trigger", str()}, {"started_at", time()}},
                     {"sync_id", "trigger", "started_at"});
  json counts = object({{"pending", integer()},
                        {"running", integer()},
                        {"indexed", integer()},
                        {"failed", integer()}},
                       {"pending", "running", "indexed", "failed"});
  return object({{"id", id_schema()},
                 {"name", str()},
                 {"status", one_of_strings({"active", "paused", "error", "deleting"})},
                 {"sync_status", one_of_strings({"idle", "running"})},
                 {"last_error", nullable(str())},
                 {"last_synced_at", nullable(time())},
                 {"sync_schedule_s", nullable(integer())},
                 {"sync", nullable(sync)},
                 {"documents", counts},
                 {"created_at", time()},
                 {"updated_at", time()},
                 {"version", integer()}},
                {"id", "name", "status", "sync_status", "last_error", "last_synced_at",
                 "sync_schedule_s", "sync", "documents", "created_at", "updated_at", "version"},
                "A connector (docs/api.md, Connectors)");
}

json hold_kind() { return one_of_strings({"EXECUTION_STATE_UNKNOWN", "RESULT_UNKNOWN"}); }

json hold() {
  return object(
      {{"id", id_schema()},
       {"target", str()},
       {"kind", hold_kind()},
       {"job", nullable(str())},
       {"attempt", nullable(integer())},
       {"reason", str()},
       {"placed_by", str()},
       {"placed_at", nullable(time())},
       {"released", boolean()},
       {"released_by", nullable(str())},
       {"released_at", nullable(time())},
       {"release_note", nullable(str())},
       {"execution_stopped", boolean()},
       {"outcome", nullable(one_of_strings({"SUCCEEDED", "FAILED"}))},
       {"version", integer()}},
      {"id", "target", "kind", "job", "attempt", "reason", "placed_by", "placed_at", "released",
       "released_by", "released_at", "release_note", "execution_stopped", "outcome"},
      "A hold on a target (docs/api.md, Holds and the gate)");
}

json gate() {
  json hold_reason =
      object({{"code", one_of_strings({"hold"})}, {"hold", str()}, {"kind", hold_kind()}},
             {"code", "hold", "kind"});
  json attempt_reason = object(
      {{"code", one_of_strings({"attempt_active"})}, {"job", str()}, {"state", attempt_state()}},
      {"code", "job", "state"});
  json recovery = object({{"hold", str()}, {"kind", hold_kind()}}, {"hold", "kind"},
                         "An open RESULT_UNKNOWN hold: someone must find out what happened");
  return object({{"target", str()},
                 {"may_start", boolean()},
                 {"reasons", array_of({{"oneOf", json::array({hold_reason, attempt_reason})}})},
                 {"recovery_needed", array_of(recovery)}},
                {"target", "may_start", "reasons", "recovery_needed"},
                "Whether new work may start on a target, and why not");
}

json event() {
  json data = {{"type", "object"}, {"description", "The event's own fields, by type"}};
  return object({{"seq", integer()},
                 {"stream", str()},
                 {"version", integer()},
                 {"type", str()},
                 {"recorded_at", time()},
                 {"actor", str()},
                 {"command_id", str()},
                 {"data", data}},
                {"seq", "stream", "version", "type", "recorded_at", "actor", "command_id", "data"},
                "One event of the log");
}

json documents_report() {
  const json doc_id = str(1, connectors::kDocumentIdBytesMax);
  json ids = array_of(doc_id);
  json failed = array_of(object({{"id", doc_id}, {"error", str()}}, {"id"}));
  return object({{"pending", ids}, {"running", ids}, {"indexed", ids}, {"failed", failed}}, {},
                "Document states a sync reports, at most 10,000 documents in all");
}

json error() {
  json e = {{"type", "object"},
            {"description",
             "An error: `error` is a sentence, `code` a stable code (docs/api.md, Errors); "
             "other fields give context"},
            {"required", {"error", "code"}},
            {"properties",
             {{"error", str()},
              {"code", str()},
              {"field", {{"type", "string"}, {"description", "the field or parameter at fault"}}},
              {"state", {{"type", "string"}, {"description", "the state that refused"}}},
              {"allowed", {{"type", "array"}, {"items", str()}}},
              {"cancel_reason", nullable(str())},
              {"job", str()},
              {"sync_id", str()},
              {"reason", str()},
              {"current_sync_id", nullable(str())},
              {"continue", boolean()},
              {"status", str()},
              {"leader",
               {{"type", {"string", "null"}},
                {"description", "not_leader: the leader's URL, null while none is known"}}},
              {"role", str()},
              {"epoch", {{"type", "integer"}}},
              {"last_seq", {{"type", "integer"}}},
              {"lag_events", {{"type", "integer"}}}}}};
  return e;
}

}  // namespace

json ref(const char* name) { return {{"$ref", std::string("#/components/schemas/") + name}}; }

json component_schemas() {
  json jobs_page =
      object({{"jobs", array_of(ref("Job"))}, {"next", nullable(id_schema())}}, {"jobs", "next"});
  json connectors_page =
      object({{"connectors", array_of(ref("Connector"))}, {"next", nullable(id_schema())}},
             {"connectors", "next"});
  json holds_page =
      object({{"holds", array_of(ref("Hold"))}, {"next", nullable(id_schema())}}, {"holds", "next"},
             "A page of holds; `next` is the `after` of the next page, or null");
  json events_page = object({{"events", array_of(ref("Event"))}, {"next_after", integer()}},
                            {"events", "next_after"});
  json job_lease =
      object({{"job", ref("Job")}, {"lease_token", str(32, 32)}, {"lease_expires_at", time()}},
             {"job"}, "A job with the lease its worker holds");
  json heartbeat = object({{"lease_expires_at", time()}, {"cancel_requested", boolean()}},
                          {"lease_expires_at", "cancel_requested"});
  json sync_started =
      object({{"sync_id", str()}, {"connector", ref("Connector")}}, {"sync_id", "connector"});
  json progress = object({{"continue", boolean()}}, {"continue"});
  json document_item =
      object({{"id", str()},
              {"status", one_of_strings({"pending", "running", "indexed", "failed"})},
              {"error", str()}},
             {"id", "status"});
  json documents = object({{"documents", array_of(document_item)}}, {"documents"});
  // role, epoch and lag_events only on a node of a cluster (docs/cluster.md).
  json health = object({{"status", one_of_strings({"ok"})},
                        {"last_seq", integer()},
                        {"role", one_of_strings({"leader", "standby"})},
                        {"epoch", integer()},
                        {"lag_events", integer()}},
                       {"status", "last_seq"});
  json health_leader =
      object({{"status", one_of_strings({"ok"})}, {"role", one_of_strings({"leader"})}},
             {"status", "role"});
  json whoami = object({{"name", str()},
                        {"role", one_of_strings({"reader", "worker", "operator"})},
                        {"authenticated", boolean()}},
                       {"name", "role", "authenticated"});
  return {{"Error", error()},
          {"Job", job()},
          {"JobPage", jobs_page},
          {"JobLease", job_lease},
          {"Heartbeat", heartbeat},
          {"Connector", connector()},
          {"ConnectorPage", connectors_page},
          {"SyncStarted", sync_started},
          {"SyncProgress", progress},
          {"DocumentsReport", documents_report()},
          {"Documents", documents},
          {"Hold", hold()},
          {"HoldPage", holds_page},
          {"Gate", gate()},
          {"Event", event()},
          {"EventPage", events_page},
          {"Health", health},
          {"HealthLeader", health_leader},
          {"WhoAmI", whoami}};
}

}  // namespace runledger::http::openapi
