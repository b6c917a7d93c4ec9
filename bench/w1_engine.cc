// W1 on the in-process engine: see w1_engine.h.
#include "bench/w1_engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "base/sha256.h"
#include "bench/machine.h"
#include "bench/w1_chained.h"
#include "bench/w1_threads.h"
#include "http/rejection_status.h"

namespace runledger::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

class Caller {
 public:
  Caller(Engine& e, const W1Plan& plan, size_t index) : e_(e), plan_(plan), index_(index) {}

  // Runs job `n` (the caller's k-th); "" when every reply was as expected.
  std::string run_job(uint64_t n, uint64_t k) {
    for (W1Step& step : w1_job_steps(plan_, index_, n, k)) {
      if (auto err = expect(std::move(step.command), step.want); !err.empty()) {
        return step.what + ": " + err;
      }
    }
    return "";
  }

  LatencyRecorder latency;
  uint64_t commands = 0;

 private:
  // Runs one command; "" when it got the reply it should.
  std::string expect(Command c, const std::string& want) {
    Request r;
    r.command = std::move(c);
    r.render = brief_reply;
    r.actor = "bench";
    auto start = SteadyClock::now();
    Reply reply = e_.execute(std::move(r));
    if (plan_.record_latency) {
      latency.add(std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count());
    }
    ++commands;
    return w1_reply_error(reply, want);
  }

  Engine& e_;
  const W1Plan& plan_;
  const size_t index_;
};

}  // namespace

Reply brief_reply(const State&, const Decision* d) {
  if (d->rejection) {
    return Reply{http::http_status(d->rejection->code), std::string(code_name(d->rejection->code))};
  }
  if (d->events.empty()) return Reply{204, ""};
  return Reply{200, d->events.front().stream + " " +
                        std::string(event_type_name(d->events.back().payload.type))};
}

std::string w1_reply_error(const Reply& reply, const std::string& want) {
  if (reply.status == 200 && reply.body.find(want) != std::string::npos) return "";
  return fmt::format("{} {} (wanted 200 with '{}')", reply.status, reply.body, want);
}

std::vector<W1Step> w1_job_steps(const W1Plan& plan, size_t caller, uint64_t n, uint64_t k) {
  std::string id = w1_job_id(plan, n);
  std::string kind = fmt::format("{}-k{}", plan.id_prefix, caller);
  jobs::Enqueue enq;
  enq.id = id;
  enq.kind = kind;
  enq.target = w1_target(plan, caller, k);
  enq.input = R"({"window":"2026-05-06T00:00Z/PT1H"})";
  std::vector<std::string> plan_steps = enq.plan;
  std::string token = sha256_hex(id).substr(0, jobs::kLeaseTokenChars);
  std::vector<W1Step> steps;
  steps.reserve(kW1CommandsPerJob);
  steps.push_back({std::move(enq), "", "enqueue " + id});
  steps.push_back({jobs::Claim{"worker-" + kind, {kind}, kW1LeaseS, token}, job_stream(id) + " ",
                   "claim " + id});
  steps.push_back({jobs::Start{id, token, "handle-" + id}, "", "start " + id});
  for (size_t i = 0; i < plan_steps.size(); ++i) {
    const std::string& name = plan_steps[i];
    steps.push_back({jobs::StepStart{id, name, token}, "", "step start " + id + "/" + name});
    bool last = i + 1 == plan_steps.size();
    steps.push_back({jobs::StepDone{id, name, token, R"({"rows":1})"},
                     last ? " AttemptSucceeded" : "", "step done " + id + "/" + name});
  }
  return steps;
}

std::string w1_job_id(const W1Plan& plan, uint64_t n) {
  return fmt::format("{}-{}", plan.id_prefix, n);
}

std::string w1_target(const W1Plan& plan, size_t caller, uint64_t k) {
  size_t per_caller = std::max<size_t>(1, plan.targets / std::max<size_t>(1, plan.callers));
  return fmt::format("{}-t{}", plan.id_prefix, caller + plan.callers * (k % per_caller));
}

W1Outcome drive_w1(Engine& engine, const W1Plan& plan, const ProgressFn& progress,
                   std::string_view phase) {
  const double cpu_before = process_cpu_seconds();
  W1Outcome out =
      plan.chained ? drive_w1_chained(engine, plan, progress, phase)
                   : drive_w1_threads(
                         plan, [&](size_t c) { return Caller(engine, plan, c); }, progress, phase);
  out.cpu_seconds = process_cpu_seconds() - cpu_before;
  return out;
}

}  // namespace runledger::bench
