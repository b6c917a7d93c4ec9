// W1 over HTTP: see w1_http.h.
#include "bench/w1_http.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "bench/progress_wait.h"

namespace runledger::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr time_t kConnectTimeoutS = 10;
// Generous: a loaded shared machine must not turn into a failed run.
constexpr time_t kReplyTimeoutS = 60;
constexpr size_t kFailuresKeptMax = 10;
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
  W1Outcome out;
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> succeeded{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<std::thread> threads;
  auto started = SteadyClock::now();
  for (size_t c = 0; c < plan.callers; ++c) {
    threads.emplace_back([&, c] {
      HttpCaller caller(url, plan, c);
      for (uint64_t k = 0; !stop.load(std::memory_order_relaxed); ++k) {
        uint64_t n = next.fetch_add(1);
        if (n >= plan.jobs) break;
        std::string err = caller.run_job(n, k);
        if (!err.empty()) {
          stop = true;
          std::lock_guard<std::mutex> lk(mu);
          if (out.failures.size() < kFailuresKeptMax) out.failures.push_back(err);
          break;
        }
        succeeded.fetch_add(1, std::memory_order_relaxed);
      }
      std::lock_guard<std::mutex> lk(mu);
      out.latency.merge(caller.latency);
      out.commands += caller.commands;
    });
  }
  wait_with_progress(threads, succeeded, plan.jobs, stop, progress, phase);
  out.seconds = std::chrono::duration<double>(SteadyClock::now() - started).count();
  out.jobs_succeeded = succeeded.load();
  return out;
}

}  // namespace runledger::bench
