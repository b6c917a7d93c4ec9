// Route tables of the API (docs/api.md), one function per section.
#pragma once

#include "engine/engine.h"
#include "http/http_counters.h"
#include "http/live_stream.h"
#include "http/router.h"

namespace runledger::http {

struct ApiOptions {
  int64_t lease_min_s = 1;
  int64_t lease_max_s = 3600;
};

void add_job_routes(Router& router, Engine& engine, const ApiOptions& options);
void add_connector_routes(Router& router, Engine& engine);
void add_hold_routes(Router& router, Engine& engine);
void add_event_routes(Router& router, Engine& engine);
// `live`: its streams' figures are part of /metrics.
void add_ops_routes(Router& router, Engine& engine, const LiveStreams& live,
                    const HttpCounters& counters);

}  // namespace runledger::http
