// The mixed workload: see mixed_workload.h.
#include "tests/engine/mixed_workload.h"

#include "tests/engine/engine_harness.h"

namespace runledger::testing {
namespace {

constexpr int64_t kShortLeaseS = 10;
constexpr int64_t kLongLeaseS = 3600;
constexpr int64_t kScheduleS = 60;

// Runs commands and remembers the first reply that was not `want`.
class Script {
 public:
  Script(Engine& e, std::string prefix) : e_(e), p_(std::move(prefix)) {}

  std::string id(const std::string& name) const { return p_ + name; }
  void expect(Command c, int want = 200) {
    if (!failure_.empty()) return;
    std::string what = command_name(c);
    Reply r = run(e_, std::move(c));
    if (r.status != want) {
      failure_ = what + ": wanted " + std::to_string(want) + ", got " + std::to_string(r.status) +
                 " " + r.body;
    }
  }
  void enqueue(const std::string& name, const std::string& kind, const std::string& target) {
    expect(enqueue_command(id(name), kind, id(target)));
  }
  // Claims the job `name`, the only ready one of its kind.
  void claim(const std::string& name, const std::string& kind, int64_t lease_s) {
    if (!failure_.empty()) return;
    Reply r = run(e_, jobs::Claim{"worker-" + name, {kind}, lease_s, token(name)});
    if (claimed_job(r) != id(name)) {
      fail("claim of " + id(name) + ": " + std::to_string(r.status) + " " + r.body);
    }
  }
  void start(const std::string& name) {
    expect(jobs::Start{id(name), token(name), "handle-" + name});
  }
  void step(const std::string& name, const std::string& step, bool done) {
    if (done) {
      expect(jobs::StepDone{id(name), step, token(name), R"({"rows":7})"});
    } else {
      expect(jobs::StepStart{id(name), step, token(name)});
    }
  }
  void fail(std::string why) {
    if (failure_.empty()) failure_ = std::move(why);
  }
  std::string token(const std::string& name) const { return lease_token(p_ + name); }
  const std::string& failure() const { return failure_; }

 private:
  Engine& e_;
  std::string p_;
  std::string failure_;
};

void run_jobs(Script& s, Engine& e, ManualClock& clock) {
  // STALE first: its expiry must not touch the other leases.
  s.enqueue("stale", "stale", "t-stale");
  s.claim("stale", "stale", kShortLeaseS);
  s.start("stale");
  clock.advance_ms((kShortLeaseS + 1) * 1000);
  e.tick();
  s.enqueue("queued", "idle", "t-queued");
  s.enqueue("leased", "lease", "t-leased");
  s.claim("leased", "lease", kLongLeaseS);
  s.enqueue("running", "run", "t-running");
  s.claim("running", "run", kLongLeaseS);
  s.start("running");
  s.step("running", "FETCH", false);
  s.step("running", "FETCH", true);
  s.step("running", "VALIDATE", false);
  s.enqueue("blocked", "blocked", "t-running");
  s.enqueue("retry", "retry", "t-retry");
  s.claim("retry", "retry", kLongLeaseS);
  s.start("retry");
  s.step("retry", "FETCH", false);
  s.step("retry", "FETCH", true);
  s.step("retry", "VALIDATE", false);
  s.expect(jobs::StepFail{s.id("retry"), "VALIDATE", s.token("retry"), "schema drift", true});
  s.enqueue("cancelled", "cancelled", "t-cancelled");
  s.expect(jobs::Cancel{s.id("cancelled"), "not needed"});
  s.enqueue("cancelreq", "cancelreq", "t-cancelreq");
  s.claim("cancelreq", "cancelreq", kLongLeaseS);
  s.expect(jobs::Cancel{s.id("cancelreq"), "operator asked"});
  for (const char* name : {"done", "rerun"}) {
    std::string err = run_w1_job(e, s.id(name), s.id(name), s.id(std::string("t-") + name), {});
    if (!err.empty()) s.fail(err);
  }
  s.expect(jobs::Rerun{s.id("rerun"), "late data arrived"});
}

void run_connectors(Script& s) {
  s.expect(connectors::Create{s.id("c-sync"), "orders", kScheduleS});
  s.expect(connectors::StartSync{s.id("c-sync"), s.id("sync-1")});
  connectors::DocumentReport docs;
  docs.pending = {"d1", "d2"};
  docs.indexed = {"d3"};
  docs.failed = {{"d4", "bad encoding"}};
  s.expect(connectors::ReportProgress{s.id("c-sync"), s.id("sync-1"), docs});
  s.expect(connectors::Create{s.id("c-paused"), "crm", 0});
  s.expect(connectors::Update{s.id("c-paused"), "paused", std::nullopt, std::nullopt});
  s.expect(connectors::Create{s.id("c-done"), "wiki", 0});
  s.expect(connectors::StartSync{s.id("c-done"), s.id("sync-2")});
  s.expect(connectors::ReportSucceeded{s.id("c-done"), s.id("sync-2"), docs});
  s.expect(connectors::Create{s.id("c-gone"), "legacy", 0});
  s.expect(connectors::Delete{s.id("c-gone")});
}

void run_holds(Script& s) {
  s.expect(holds::Place{s.id("h-open"), s.id("t-open"), holds::kResultUnknown,
                        "output of a manual backfill is unchecked", ""});
  s.expect(holds::Place{s.id("h-released"), s.id("t-released"), holds::kExecutionStateUnknown,
                        "a script may still be writing", ""});
  s.expect(
      holds::ReleaseHold{s.id("h-released"), "checked: the script exited", true, std::nullopt});
}

}  // namespace

std::string run_mixed_workload(Engine& e, ManualClock& clock, const std::string& prefix) {
  Script s(e, prefix);
  run_jobs(s, e, clock);
  run_connectors(s);
  run_holds(s);
  return s.failure();
}

}  // namespace runledger::testing
