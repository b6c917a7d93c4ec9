// Worker: see sim_worker.h.
#include "tests/engine/sim_worker.h"

#include <optional>

#include "base/sha256.h"

namespace runledger::testing {
namespace {

const std::vector<int64_t> kWorkerLeasesS = {2, 10, 30, 60};
// How often a worker misbehaves, per action.
constexpr int kCrashPerMille = 12;
constexpr int kAwayPerMille = 15;
constexpr int kOutcomeUnknownPerMille = 25;
constexpr int kReleasePercent = 4;
constexpr int kStepFailPercent = 8;
constexpr int kCancelAckPercent = 50;
constexpr int kWrongHandlePercent = 5;
constexpr int kObservedRunningPercent = 60;
constexpr int kExitZeroPercent = 60;
constexpr int kAnyKindPercent = 15;
constexpr int kExtraHeartbeatPercent = 4;
// Actions a worker sits out while down or away.
constexpr int64_t kAbsentActionsMax = 40;
// A worker heartbeats once less than this share of its lease is left.
constexpr int64_t kHeartbeatAtLeftPercent = 40;

}  // namespace

Worker::Worker(std::string id, std::vector<std::string> kinds)
    : id_(std::move(id)), kinds_(std::move(kinds)) {}

void Worker::act(SimBus& bus) {
  switch (phase_) {
    case Phase::kIdle:
      return claim(bus);
    case Phase::kLeased:
      return leased(bus);
    case Phase::kRunning:
      return running(bus);
    case Phase::kDown:
      if (--steps_left_ <= 0) come_back(bus);
      return;
    case Phase::kAway:
      // Back from a pause, it carries on with the token it had: maybe fenced.
      if (--steps_left_ <= 0) phase_ = before_away_;
      return;
  }
}

Worker::JobView Worker::look(SimBus& bus) const {
  std::string token_hash = sha256_hex(token_);
  return bus.host().read([&](const State& s) {
    JobView v;
    auto it = s.jobs.by_id.find(job_);
    if (it == s.jobs.by_id.end()) return v;
    const jobs::Attempt& a = it->second.latest();
    v.found = true;
    v.ours = !token_.empty() && a.lease_token_sha256 == token_hash;
    v.state = jobs::to_string(a.state);
    v.cancel_requested = a.cancel_requested;
    v.lease_expires_at_ms = a.lease_expires_at_ms;
    for (const auto& st : a.steps) {
      if (st.state == jobs::StepState::kRunning) v.running_step = st.name;
      if (st.state == jobs::StepState::kPending && v.first_pending.empty()) {
        v.first_pending = st.name;
      }
    }
    return v;
  });
}

void Worker::claim(SimBus& bus) {
  SimRandom& rnd = bus.random();
  jobs::Claim c{id_, kinds_, rnd.one_of(kWorkerLeasesS), rnd.token()};
  if (rnd.chance(kAnyKindPercent)) c.kinds.clear();
  Sent r = bus.send(c, id_);
  if (!r.ok() || !r.body.is_object() || !r.body.contains("job")) return;
  job_ = r.body["job"].get<std::string>();
  token_ = c.lease_token;
  handle_.clear();
  lease_s_ = *c.lease_s;
  lease_until_ms_ = bus.now_ms() + lease_s_ * kMsPerS;
  phase_ = Phase::kLeased;
}

void Worker::leased(SimBus& bus) {
  SimRandom& rnd = bus.random();
  if (rnd.chance_per_mille(kCrashPerMille)) return crash(bus, false);
  if (rnd.chance_per_mille(kAwayPerMille)) {
    before_away_ = phase_;
    phase_ = Phase::kAway;
    steps_left_ = static_cast<int>(rnd.between(1, kAbsentActionsMax));
    return;
  }
  int64_t left_ms = lease_until_ms_ - bus.now_ms();
  if (left_ms * 100 < lease_s_ * kMsPerS * kHeartbeatAtLeftPercent) return heartbeat(bus);
  if (rnd.chance(kReleasePercent)) {
    bus.send(jobs::Release{job_, token_}, id_);
    return drop();
  }
  handle_ = id_ + "-h" + std::to_string(++handles_made_);
  bus.send(jobs::Start{job_, token_, handle_}, id_);
  resync(bus);
}

void Worker::running(SimBus& bus) {
  SimRandom& rnd = bus.random();
  if (rnd.chance_per_mille(kCrashPerMille)) return crash(bus, true);
  if (rnd.chance_per_mille(kAwayPerMille)) {
    before_away_ = phase_;
    phase_ = Phase::kAway;
    steps_left_ = static_cast<int>(rnd.between(1, kAbsentActionsMax));
    return;
  }
  if (rnd.chance_per_mille(kOutcomeUnknownPerMille)) {
    // The submission's reply was lost, or the work stopped with unknown output.
    std::string kind = rnd.chance(50) ? holds::kExecutionStateUnknown : holds::kResultUnknown;
    Sent r = bus.send(jobs::OutcomeUnknown{job_, token_, kind, "submission reply lost"}, id_);
    if (!r.ok()) return resync(bus);
    phase_ = Phase::kDown;  // it finds out later, and then reattaches
    steps_left_ = static_cast<int>(rnd.between(1, kAbsentActionsMax));
    return;
  }
  int64_t left_ms = lease_until_ms_ - bus.now_ms();
  if (left_ms * 100 < lease_s_ * kMsPerS * kHeartbeatAtLeftPercent ||
      rnd.chance(kExtraHeartbeatPercent)) {
    return heartbeat(bus);
  }
  JobView v = look(bus);
  if (!v.ours || v.state != "RUNNING") return resync(bus);
  if (v.cancel_requested && rnd.chance(kCancelAckPercent)) {
    bus.send(jobs::CancelAck{job_, token_}, id_);
    return resync(bus);
  }
  work_step(bus, v);
}

void Worker::work_step(SimBus& bus, const JobView& v) {
  SimRandom& rnd = bus.random();
  if (v.running_step.empty()) {
    if (v.first_pending.empty()) return resync(bus);
    bus.send(jobs::StepStart{job_, v.first_pending, token_}, id_);
  } else if (rnd.chance(kStepFailPercent)) {
    bus.send(jobs::StepFail{job_, v.running_step, token_, "upstream returned 500", rnd.chance(50)},
             id_);
  } else {
    std::string output =
        rnd.chance(50) ? R"({"rows":)" + std::to_string(rnd.below(1000)) + "}" : "";
    bus.send(jobs::StepDone{job_, v.running_step, token_, output}, id_);
  }
  resync(bus);
}

void Worker::heartbeat(SimBus& bus) {
  SimRandom& rnd = bus.random();
  std::optional<int64_t> lease;
  if (rnd.chance(30)) lease = rnd.one_of(kWorkerLeasesS);
  Sent r = bus.send(jobs::Heartbeat{job_, token_, lease}, id_);
  if (r.ok()) lease_until_ms_ = bus.now_ms() + lease.value_or(lease_s_) * kMsPerS;
  resync(bus);
}

void Worker::crash(SimBus& bus, bool started) {
  // The process is gone; what it had written down (job, handle) survives.
  phase_ = Phase::kDown;
  token_.clear();
  if (!started) handle_.clear();
  steps_left_ = static_cast<int>(bus.random().between(1, kAbsentActionsMax));
}

void Worker::come_back(SimBus& bus) {
  SimRandom& rnd = bus.random();
  if (handle_.empty()) return drop();
  jobs::Reattach r;
  r.job_id = job_;
  r.worker = id_;
  r.execution_handle = rnd.chance(kWrongHandlePercent) ? handle_ + "-other" : handle_;
  r.observed = rnd.chance(kObservedRunningPercent) ? "running" : "exited";
  if (r.observed == "exited") r.exit_code = rnd.chance(kExitZeroPercent) ? 0 : 1;
  r.lease_s = rnd.one_of(kWorkerLeasesS);
  r.lease_token = rnd.token();
  Sent reply = bus.send(r, id_);
  if (!reply.ok() || r.observed != "running") return drop();
  token_ = r.lease_token;
  lease_s_ = *r.lease_s;
  lease_until_ms_ = bus.now_ms() + lease_s_ * kMsPerS;
  phase_ = Phase::kRunning;
  resync(bus);
}

void Worker::resync(SimBus& bus) {
  JobView v = look(bus);
  if (!v.found || !v.ours) return drop();
  if (v.state == "LEASED") {
    phase_ = Phase::kLeased;
  } else if (v.state == "RUNNING") {
    phase_ = Phase::kRunning;
  } else if (v.state == "STALE" && !handle_.empty()) {
    phase_ = Phase::kDown;  // its lease ran out under it: reattach at once
    steps_left_ = 1;
  } else {
    drop();
  }
}

void Worker::drop() {
  phase_ = Phase::kIdle;
  job_.clear();
  token_.clear();
  handle_.clear();
}

}  // namespace runledger::testing
