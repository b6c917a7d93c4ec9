// Job calls for the end-to-end tests: see job_calls.h.
#include "tests/http/job_calls.h"

namespace runledger::testing {

ApiReply enqueue(ApiClient& c, const std::string& id, const std::string& target,
                 const std::string& kind, nlohmann::json extra) {
  extra["id"] = id;
  extra["target"] = target;
  extra["kind"] = kind;
  return c.post("/v1/jobs", extra);
}

ApiReply claim(ApiClient& c, const std::string& worker, const std::string& kind) {
  return c.post("/v1/jobs/claim",
                {{"worker", worker}, {"kinds", {kind}}, {"lease_s", kTestLeaseS}});
}

ApiReply worker_call(ApiClient& c, const std::string& job, const std::string& action,
                     const std::string& token, nlohmann::json extra) {
  extra["lease_token"] = token;
  return c.post("/v1/jobs/" + job + "/" + action, extra);
}

ApiReply run_steps(ApiClient& c, const std::string& job, const std::string& token,
                   const std::vector<std::string>& steps) {
  ApiReply last;
  for (const auto& step : steps) {
    last = worker_call(c, job, "steps/" + step + "/start", token);
    if (last.status != 200) return last;
    last = worker_call(c, job, "steps/" + step + "/done", token);
    if (last.status != 200) return last;
  }
  return last;
}

std::string token_of(const ApiReply& r) {
  if (!r.json.is_object()) return "";
  return r.json.value("lease_token", "");
}

nlohmann::json job_view(ApiClient& c, const std::string& id) {
  ApiReply r = c.get("/v1/jobs/" + id);
  return r.status == 200 ? r.json : nlohmann::json();
}

std::string step_state(const nlohmann::json& job, const std::string& name) {
  if (!job.is_object() || !job.contains("steps")) return "";
  for (const auto& s : job.at("steps")) {
    if (s.value("name", "") == name) return s.value("state", "");
  }
  return "";
}

}  // namespace runledger::testing
