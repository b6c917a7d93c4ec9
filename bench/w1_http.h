// The W1 driver over HTTP: `plan.callers` keep-alive connections, each a
// client that runs whole jobs through the public API exactly as a worker
// would: POST /v1/jobs, POST /v1/jobs/claim (the lease token comes back in
// the reply), start, then step start + done for each step. One request is in
// flight per connection at a time. Every reply is checked: 201 for the
// enqueue, 200 with this job for the claim, 200 for the rest, and SUCCEEDED
// after the last step.
//
// The connections are spread over `client_threads` threads, each running an
// event loop (as pgbench -j spreads its clients over threads), so the load
// generator spends its CPU on requests rather than on waking a thread per
// reply, and leaves the cores to the server it measures.
#pragma once

#include <string>

#include "bench/w1_engine.h"

namespace runledger::bench {

// GET `path` on `url`; false (and why in *error) when there is no reply.
bool http_get(const std::string& url, const std::string& path, int* status, std::string* body,
              std::string* error);

W1Outcome drive_w1_http(const std::string& url, const W1Plan& plan, size_t client_threads,
                        const ProgressFn& progress, std::string_view phase);

}  // namespace runledger::bench
