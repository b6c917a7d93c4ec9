// JobWorker: W1 with now and then a retryable step failure; see
// crash_clients.h.
#include <chrono>
#include <thread>

#include "tests/faults/crash_clients.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

// A claim for a job of the worker's own kind that is QUEUED and ready finds
// it; a few empty answers are tolerated (and waited out), not a run of them.
constexpr int kEmptyClaimsMax = 50;
constexpr auto kEmptyClaimWait = std::chrono::milliseconds(20);

bool finished(const std::string& state) {
  return state == "SUCCEEDED" || state == "FAILED" || state == "CANCELLED";
}

int job_command_status(const std::string& what) { return what == "enqueue" ? 201 : 200; }

// The types the last event of each job command may have (projections/job_decide_*.cc).
std::set<std::string> job_command_types(const std::string& what) {
  if (what == "enqueue") return {"JobEnqueued"};
  if (what == "claim") return {"JobLeased"};
  if (what == "start") return {"JobStarted", "AttemptSucceeded"};
  if (what == "step_start") return {"StepStarted"};
  if (what == "step_done") return {"StepSucceeded", "AttemptSucceeded", "AttemptCancelled"};
  if (what == "step_failed") return {"AttemptFailed", "RetryScheduled"};
  return {};
}

}  // namespace

JobWorker::JobWorker(int number, uint64_t seed)
    : CrashClient("worker" + std::to_string(number), seed), kind_("crash-" + name()) {}

SentCommand JobWorker::next_command() {
  const json* job = job_.empty() ? nullptr : view_of(job_);
  const std::string state = job != nullptr ? job->value("state", "") : "";
  if (job == nullptr || finished(state)) {
    const std::string id = name() + "-j" + std::to_string(++jobs_);
    job_ = "job/" + id;
    token_.clear();
    json body = {
        {"id", id}, {"kind", kind_}, {"target", "t-" + id}, {"max_attempts", kMaxAttempts}};
    return command("POST", "/v1/jobs", body, "enqueue", job_);
  }
  if (state == "QUEUED") {
    json body = {{"worker", name()}, {"kinds", {kind_}}, {"lease_s", kLeaseS}};
    return command("POST", "/v1/jobs/claim", body, "claim", job_);
  }
  if (state == "LEASED") return worker_command(*job, "start", "start");
  if (state == "RUNNING") return step_command(*job);
  // Nothing in this traffic makes a job STALE: leases outlive the test.
  problem(job_ + " is " + state + ": " + job->dump());
  job_.clear();
  return next_command();
}

SentCommand JobWorker::worker_command(const json& job, const std::string& action,
                                      const std::string& what, json body) {
  body["lease_token"] = token_;
  const std::string id = job.value("id", "");
  return command("POST", "/v1/jobs/" + id + "/" + action, body, what, "job/" + id);
}

SentCommand JobWorker::step_command(const json& job) {
  for (const auto& step : job.at("steps")) {
    const std::string state = step.value("state", "");
    const std::string path = "steps/" + step.value("name", "");
    if (state == "RUNNING") {
      if (job.value("attempt", 0) < kMaxAttempts && chance(kStepFailPercent)) {
        return worker_command(job, path + "/failed", "step_failed",
                              {{"error", "injected failure"}, {"retryable", true}});
      }
      return worker_command(job, path + "/done", "step_done");
    }
    if (state == "PENDING") return worker_command(job, path + "/start", "step_start");
  }
  problem(job_ + " is RUNNING with no step to run: " + job.dump());
  job_.clear();
  return next_command();
}

void JobWorker::on_reply(const SentCommand& c, const ApiReply& r) {
  if (c.what == "claim" && r.status == 204) {
    no_effect();
    if (++empty_claims_ == kEmptyClaimsMax) problem("claims keep finding nothing for " + job_);
    std::this_thread::sleep_for(kEmptyClaimWait);
    return;
  }
  const bool replayed_enqueue = c.what == "enqueue" && r.status == 200;
  if ((r.status != job_command_status(c.what) && !replayed_enqueue) || !r.json.is_object()) {
    problem(c.what + " on " + c.stream + ": " + std::to_string(r.status) + " " + r.body);
    return;
  }
  if (c.what == "claim") {
    empty_claims_ = 0;
    const json& job = r.json.at("job");
    if ("job/" + job.value("id", "") != job_) {
      problem("claimed " + job.value("id", "") + " instead of " + job_);
      return;
    }
    token_ = r.json.value("lease_token", "");
    ack(c, job, job_command_types(c.what));
    return;
  }
  Ack& a = ack(c, r.json, job_command_types(c.what));
  if (c.what.rfind("step_", 0) == 0) {
    const std::string path = c.path.substr(c.path.find("/steps/") + 7);
    a.step = path.substr(0, path.find('/'));
  }
}

}  // namespace runledger::testing
