// Operations: health, Prometheus metrics, the OpenAPI document.
#include "http/handler_support.h"
#include "http/openapi.h"
#include "http/routes.h"

namespace runledger::http {

namespace {

// GET /v1/health: 200 while this node does its part (a single node or a
// leader that can write; a standby that follows the database), else 503.
// A read through the sequencer proves it is alive, not just the socket. It
// is handed to the engine from the event loop, without a thread of the
// blocking pool: a load of big reads can hold every one of those, and a
// load balancer's probe must not wait for them.
Request health(Engine& engine, const ApiOptions& options) {
  const bool clustered = static_cast<bool>(options.node_role);
  const NodeRole role = clustered ? options.node_role() : NodeRole{true, 0, 0, false, ""};
  Request read;
  read.render = [&engine, clustered, role](const State& s, const Decision*) {
    nlohmann::json j = {{"status", "ok"}, {"last_seq", s.last_seq}};
    if (clustered) {
      j["role"] = role.leader ? "leader" : "standby";
      j["epoch"] = role.epoch;
      if (!role.leader)
        j["lag_events"] = role.head_seen > s.last_seq ? role.head_seen - s.last_seq : 0;
    }
    std::string why;
    if (role.leader && !engine.writable())
      why = "the engine cannot write: " + engine.unavailable_reason();
    if (!role.leader && !role.following)
      why = "this standby does not follow the log: " + role.problem;
    if (why.empty()) return Reply::json(200, j);
    j["status"] = "unavailable";
    j["error"] = why;
    j["code"] = "unavailable";
    return Reply::json(503, j);
  };
  return read;
}

}  // namespace

void add_ops_routes(Router& router, Engine& engine, const ApiOptions& options,
                    const LiveStreams& live, const ClaimWaiters& claims,
                    const HttpCounters& counters) {
  router.add_command("GET", "/v1/health",
                     [&engine, options](ApiRequest&) { return health(engine, options); });
  // For load balancers: 200 on the node that takes writes, only. Nothing
  // here waits: answered on the event loop.
  router.add_command("GET", "/v1/health/leader", [&engine, options](ApiRequest&) -> Answer {
    const bool leader = !options.node_role || options.node_role().leader;
    if (!leader)
      return Reply::error(503, "not_leader", "this node is a standby", {{"role", "standby"}});
    if (!engine.writable()) {
      return Reply::error(503, "unavailable",
                          "the engine cannot write: " + engine.unavailable_reason());
    }
    return Reply::json(200, {{"status", "ok"}, {"role", "leader"}});
  });
  router.add("GET", "/metrics", [&engine, &live, &claims, &counters](ApiRequest&) {
    Reply r = engine.read([&engine](const State& s, const Decision*) {
      return Reply{200,
                   engine.metrics().render(s, engine.writable(), engine.stored_finished_jobs())};
    });
    if (r.status == 200) {
      r.body += live.metrics_text() + claims.metrics_text() + counters.metrics_text();
    }
    r.content_type = "text/plain; version=0.0.4";
    return r;
  });
  // Who the server takes the caller for: a client shows only the actions
  // its role may make.
  router.add_command("GET", "/v1/whoami", [](ApiRequest& a) {
    return Reply::json(200,
                       {{"name", a.caller}, {"role", a.role}, {"authenticated", a.authenticated}});
  });
  router.add("GET", "/v1/openapi.json", [](ApiRequest&) { return Reply{200, openapi_document()}; });
}

}  // namespace runledger::http
