// W1 over HTTP: see w1_http.h.
#include "bench/w1_http.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "bench/w1_threads.h"

namespace runledger::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr time_t kConnectTimeoutS = 10;
// Generous: a loaded shared machine must not turn into a failed run.
constexpr time_t kReplyTimeoutS = 60;
const std::vector<std::string> kPlanSteps = {"FETCH", "VALIDATE", "LOAD", "AGGREGATE"};

std::unique_ptr<httplib::Client> client_for(const std::string& url) {
  auto c = std::make_unique<httplib::Client>(url);
  c->set_keep_alive(true);
  // Without it, Nagle's algorithm holds a request's body behind its headers
  // until the server's delayed ACK: 40 ms per command.
  c->set_tcp_nodelay(true);
  c->set_connection_timeout(kConnectTimeoutS);
  c->set_read_timeout(kReplyTimeoutS);
  c->set_write_timeout(kReplyTimeoutS);
  return c;
}

class HttpCaller {
 public:
  HttpCaller(const std::string& url, const W1Plan& plan, size_t index)
      : http_(client_for(url)), plan_(plan), index_(index) {}

  std::string run_job(uint64_t n, uint64_t k) {
    std::string id = w1_job_id(plan_, n);
    std::string kind = fmt::format("{}-k{}", plan_.id_prefix, index_);
    nlohmann::json enq = {{"id", id},
                          {"kind", kind},
                          {"target", w1_target(plan_, index_, k)},
                          {"input", {{"window", "2026-05-06T00:00Z/PT1H"}}}};
    std::string body;
    if (auto err = post("/v1/jobs", enq.dump(), 201, &body); !err.empty()) {
      return "enqueue " + id + ": " + err;
    }
    nlohmann::json claim = {
        {"worker", "worker-" + kind}, {"kinds", {kind}}, {"lease_s", kW1LeaseS}};
    if (auto err = post("/v1/jobs/claim", claim.dump(), 200, &body); !err.empty()) {
      return "claim: " + err;
    }
    auto claimed = nlohmann::json::parse(body, nullptr, false);
    if (!claimed.is_object() || !claimed.contains("job") || claimed["job"].value("id", "") != id ||
        !claimed.contains("lease_token")) {
      return "claim handed out something else than " + id + ": " + body;
    }
    std::string token = claimed["lease_token"].get<std::string>();
    std::string job_path = "/v1/jobs/" + id;
    nlohmann::json start = {{"lease_token", token}, {"execution_handle", "handle-" + id}};
    if (auto err = post(job_path + "/start", start.dump(), 200, &body); !err.empty()) {
      return "start " + id + ": " + err;
    }
    std::string with_token = nlohmann::json{{"lease_token", token}}.dump();
    std::string done = nlohmann::json{{"lease_token", token}, {"output", {{"rows", 1}}}}.dump();
    for (const auto& step : kPlanSteps) {
      std::string step_path = job_path + "/steps/" + step;
      if (auto err = post(step_path + "/start", with_token, 200, &body); !err.empty()) {
        return "step start " + id + "/" + step + ": " + err;
      }
      if (auto err = post(step_path + "/done", done, 200, &body); !err.empty()) {
        return "step done " + id + "/" + step + ": " + err;
      }
    }
    auto last = nlohmann::json::parse(body, nullptr, false);
    if (!last.is_object() || last.value("state", "") != "SUCCEEDED") {
      return "job " + id + " did not end SUCCEEDED: " + body;
    }
    return "";
  }

  LatencyRecorder latency;
  uint64_t commands = 0;

 private:
  std::string post(const std::string& path, const std::string& body, int want, std::string* out) {
    auto start = SteadyClock::now();
    auto res = http_->Post(path, body, "application/json");
    latency.add(std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count());
    ++commands;
    if (!res) return "no reply: " + httplib::to_string(res.error());
    if (res->status != want) return fmt::format("{} {} (wanted {})", res->status, res->body, want);
    *out = std::move(res->body);
    return "";
  }

  std::unique_ptr<httplib::Client> http_;
  const W1Plan& plan_;
  const size_t index_;
};

}  // namespace

bool http_get(const std::string& url, const std::string& path, int* status, std::string* body,
              std::string* error) {
  auto c = client_for(url);
  auto res = c->Get(path);
  if (!res) {
    *error = httplib::to_string(res.error());
    return false;
  }
  *status = res->status;
  *body = res->body;
  return true;
}

W1Outcome drive_w1_http(const std::string& url, const W1Plan& plan, const ProgressFn& progress,
                        std::string_view phase) {
  return drive_w1_threads(
      plan, [&](size_t c) { return HttpCaller(url, plan, c); }, progress, phase);
}

}  // namespace runledger::bench
