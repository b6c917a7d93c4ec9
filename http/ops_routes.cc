// Operations: health, Prometheus metrics, the OpenAPI document.
#include "http/handler_support.h"
#include "http/openapi.h"
#include "http/routes.h"

namespace runledger::http {

void add_ops_routes(Router& router, Engine& engine, const LiveStreams& live,
                    const HttpCounters& counters) {
  router.add("GET", "/v1/health", [&engine](ApiRequest&) {
    if (!engine.writable()) {
      return Reply::error(503, "unavailable",
                          "the engine cannot write: " + engine.unavailable_reason(),
                          {{"status", "unavailable"}});
    }
    // A read through the sequencer proves it is alive, not just the socket.
    return engine.read([](const State& s, const Decision*) {
      return Reply::json(200, {{"status", "ok"}, {"last_seq", s.last_seq}});
    });
  });
  router.add("GET", "/metrics", [&engine, &live, &counters](ApiRequest&) {
    Reply r = engine.read([&engine](const State& s, const Decision*) {
      return Reply{200,
                   engine.metrics().render(s, engine.writable(), engine.stored_finished_jobs())};
    });
    if (r.status == 200) r.body += live.metrics_text() + counters.metrics_text();
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
