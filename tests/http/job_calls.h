// The calls a worker and an operator make about jobs, as one-liners for
// the end-to-end tests: enqueue, claim, and the token-carrying worker
// commands. They only build requests; the tests assert on the replies.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/http/api_client.h"

namespace runledger::testing {

// Leases in these tests are long, so that no lease expires behind a test's
// back on a slow machine: expiry is not what they test.
inline constexpr int kTestLeaseS = 600;
// The default plan of docs/domain.md 1.
inline const std::vector<std::string> kDefaultPlan = {"FETCH", "VALIDATE", "LOAD", "AGGREGATE"};

// POST /v1/jobs with id, kind and target, plus any `extra` fields.
ApiReply enqueue(ApiClient& c, const std::string& id, const std::string& target,
                 const std::string& kind, nlohmann::json extra = nlohmann::json::object());
// POST /v1/jobs/claim for one kind with a kTestLeaseS lease.
ApiReply claim(ApiClient& c, const std::string& worker, const std::string& kind);
// POST /v1/jobs/{job}/{action} with the lease token plus `extra` fields;
// `action` is e.g. "start", "heartbeat", "steps/FETCH/done".
ApiReply worker_call(ApiClient& c, const std::string& job, const std::string& action,
                     const std::string& token, nlohmann::json extra = nlohmann::json::object());
// Starts and finishes each of `steps` in order; the reply of the last call,
// or of the first that was not a 200.
ApiReply run_steps(ApiClient& c, const std::string& job, const std::string& token,
                   const std::vector<std::string>& steps);
// The lease token of a claim or reattach reply ("" when there is none).
std::string token_of(const ApiReply& r);
// GET /v1/jobs/{id} as JSON (null when it is not a 200).
nlohmann::json job_view(ApiClient& c, const std::string& id);
// The state of step `name` in a job view ("" when absent).
std::string step_state(const nlohmann::json& job, const std::string& name);

}  // namespace runledger::testing
