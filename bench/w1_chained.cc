// W1 driven by chains of completions: see w1_chained.h.
#include "bench/w1_chained.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "bench/progress_wait.h"

namespace runledger::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

// What all chains share. Chains run on the engine's writer thread (and, for
// their first command, on the thread that starts them).
struct ChainRun {
  ChainRun(Engine& e, const W1Plan& p) : engine(e), plan(p) {}

  Engine& engine;
  const W1Plan& plan;
  std::atomic<uint64_t> next_job{0};
  std::atomic<uint64_t> succeeded{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable cv;
  size_t chains_done = 0;             // GUARDED_BY(mu)
  std::vector<std::string> failures;  // GUARDED_BY(mu)
};

// One caller: its jobs one after the other, each command submitted from the
// completion of the one before. Its members are touched by one command at a
// time, so it needs no lock of its own.
class Chain {
 public:
  Chain(ChainRun& run, size_t index) : run_(run), index_(index) {}

  void start_next_job() {
    uint64_t n = run_.next_job.fetch_add(1);
    if (n >= run_.plan.jobs || run_.stop.load(std::memory_order_relaxed)) {
      finish("");
      return;
    }
    steps_ = w1_job_steps(run_.plan, index_, n, k_++);
    step_ = 0;
    submit_step();
  }

  LatencyRecorder latency;
  uint64_t commands = 0;

 private:
  void submit_step() {
    Request r;
    r.command = std::move(steps_[step_].command);
    r.render = brief_reply;
    r.actor = "bench";
    sent_ = SteadyClock::now();
    run_.engine.submit(std::move(r), [this](Reply reply) { on_reply(reply); });
  }

  void on_reply(const Reply& reply) {
    if (run_.plan.record_latency) {
      latency.add(std::chrono::duration<double, std::milli>(SteadyClock::now() - sent_).count());
    }
    ++commands;
    const W1Step& step = steps_[step_];
    if (std::string err = w1_reply_error(reply, step.want); !err.empty()) {
      run_.stop = true;  // a broken run is not worth timing further
      finish(step.what + ": " + err);
      return;
    }
    if (++step_ < steps_.size()) {
      submit_step();
      return;
    }
    run_.succeeded.fetch_add(1, std::memory_order_relaxed);
    start_next_job();
  }

  // The last thing a chain does: once the waiting thread sees every chain
  // done it may destroy them, so nothing is touched after the notify.
  void finish(const std::string& failure) {
    std::lock_guard<std::mutex> lk(run_.mu);
    if (!failure.empty() && run_.failures.size() < kW1FailuresKeptMax) {
      run_.failures.push_back(failure);
    }
    ++run_.chains_done;
    run_.cv.notify_all();
  }

  ChainRun& run_;
  const size_t index_;
  uint64_t k_ = 0;
  std::vector<W1Step> steps_;
  size_t step_ = 0;
  SteadyClock::time_point sent_;
};

}  // namespace

W1Outcome drive_w1_chained(Engine& engine, const W1Plan& plan, const ProgressFn& progress,
                           std::string_view phase) {
  ChainRun run(engine, plan);
  std::vector<std::unique_ptr<Chain>> chains;
  chains.reserve(plan.callers);
  for (size_t c = 0; c < plan.callers; ++c) chains.push_back(std::make_unique<Chain>(run, c));
  auto started = SteadyClock::now();
  for (auto& chain : chains) chain->start_next_job();
  {
    std::unique_lock<std::mutex> lk(run.mu);
    while (
        !run.cv.wait_for(lk, kProgressInterval, [&] { return run.chains_done == chains.size(); })) {
      if (progress) progress(phase, run.succeeded.load(), plan.jobs);
    }
  }
  W1Outcome out;
  out.seconds = std::chrono::duration<double>(SteadyClock::now() - started).count();
  if (progress) progress(phase, run.succeeded.load(), plan.jobs);
  out.jobs_succeeded = run.succeeded.load();
  add_caller_figures(chains, &out);
  out.failures = std::move(run.failures);
  return out;
}

}  // namespace runledger::bench
