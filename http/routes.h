// Route tables of the API (docs/api.md), one function per section.
#pragma once

#include <functional>
#include <string>

#include "engine/engine.h"
#include "http/claim_waiters.h"
#include "http/http_counters.h"
#include "http/live_stream.h"
#include "http/router.h"

namespace runledger::http {

// A cluster node's role, as /v1/health tells it (docs/cluster.md).
struct NodeRole {
  bool leader = false;
  uint64_t epoch = 0;      // led, or the latest seen
  uint64_t head_seen = 0;  // the log's head in the database when last read
  bool following = false;  // a standby that reads the database
  std::string problem;     // why it neither leads nor follows
};

struct ApiOptions {
  int64_t lease_min_s = 1;
  int64_t lease_max_s = 3600;
  // Set on a cluster node; unset on a single one, which always leads.
  std::function<NodeRole()> node_role;
};

void add_job_routes(Router& router, Engine& engine, const ApiOptions& options);
void add_connector_routes(Router& router, Engine& engine);
void add_hold_routes(Router& router, Engine& engine);
void add_event_routes(Router& router, Engine& engine);
// `live`, `claims` and `counters`: their figures are part of /metrics.
void add_ops_routes(Router& router, Engine& engine, const ApiOptions& options,
                    const LiveStreams& live, const ClaimWaiters& claims,
                    const HttpCounters& counters);

}  // namespace runledger::http
