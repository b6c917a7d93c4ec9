// Operator: see sim_operator.h.
#include "tests/engine/sim_operator.h"

#include <algorithm>
#include <optional>
#include <tuple>

namespace runledger::testing {
namespace {

constexpr int kShortPlanPercent = 40;
constexpr int kNotBeforePercent = 15;
constexpr int64_t kNotBeforeMsMax = 60'000;
constexpr int kDuplicateIdPercent = 3;
constexpr int kFinishedRerunPercent = 75;
constexpr int kHoldWithJobPercent = 40;
constexpr int kBadInputPercent = 5;
constexpr int kEvidencePercent = 90;

struct JobBrief {
  std::string id, target, state;
  bool cancel_requested = false;
};

// A live job, by id order (ids are the simulation's own).
std::optional<JobBrief> live_job(SimBus& bus) {
  auto jobs = bus.host().read([](const State& s) {
    std::vector<JobBrief> out;
    for (const auto& [id, j] : s.jobs.by_id) {
      out.push_back({id, j.target, jobs::to_string(j.latest().state), j.latest().cancel_requested});
    }
    return out;
  });
  if (jobs.empty()) return std::nullopt;
  return bus.random().one_of(jobs);
}

std::optional<JobBrief> job_now(SimBus& bus, const std::string& id) {
  return bus.host().read([&](const State& s) -> std::optional<JobBrief> {
    auto it = s.jobs.by_id.find(id);
    if (it == s.jobs.by_id.end()) return std::nullopt;
    const auto& a = it->second.latest();
    return JobBrief{id, it->second.target, jobs::to_string(a.state), a.cancel_requested};
  });
}

void expect_status(SimBus& bus, const Sent& r, int status, const std::string& what) {
  if (r.status == kInjectedWriteFailure) return;  // an injected write failure, checked by send()
  if (r.status != status) {
    bus.fail(what + ": expected " + std::to_string(status) + ", got " + std::to_string(r.status) +
             " " + r.code + " " + r.message);
  }
}

struct HoldBrief {
  std::string id, kind;
  bool of_stale_attempt = false;
};

// Open holds in an order that does not depend on the engine's random ids.
std::vector<HoldBrief> open_holds(SimBus& bus) {
  return bus.host().read([](const State& s) {
    std::vector<std::tuple<std::string, std::string, int, std::string, HoldBrief>> keyed;
    for (const auto& [id, h] : s.holds.by_id) {
      if (h.released) continue;
      bool stale = false;
      auto j = s.jobs.by_id.find(h.job);
      if (j != s.jobs.by_id.end() && j->second.attempt(h.attempt)) {
        const jobs::Attempt* a = j->second.attempt(h.attempt);
        stale = a->state == jobs::AttemptState::kStale;
      }
      // Holds the engine placed have random ids but name their attempt.
      std::string own = id.rfind("op-", 0) == 0 ? id : "";
      keyed.emplace_back(h.target, h.job, h.attempt, own, HoldBrief{id, h.kind, stale});
    }
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
      return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a), std::get<3>(a)) <
             std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b), std::get<3>(b));
    });
    std::vector<HoldBrief> out;
    for (auto& k : keyed) out.push_back(std::get<4>(k));
    return out;
  });
}

}  // namespace

const std::vector<std::string>& sim_kinds() {
  static const std::vector<std::string> kinds = {"load", "export", "compact"};
  return kinds;
}

const std::vector<std::string>& sim_targets() {
  static const std::vector<std::string> targets = {"orders",   "users",  "events",
                                                   "invoices", "clicks", "stock"};
  return targets;
}

void Operator::enqueue(SimBus& bus, size_t live_jobs_max) {
  SimRandom& rnd = bus.random();
  size_t live = bus.host().read([](const State& s) { return s.jobs.by_id.size(); });
  if (live >= live_jobs_max) return;
  bool duplicate = !enqueued_.empty() && rnd.chance(kDuplicateIdPercent);
  jobs::Enqueue c =
      enqueue_command(duplicate ? rnd.one_of(enqueued_) : "j" + std::to_string(next_job_++),
                      rnd.one_of(sim_kinds()), rnd.one_of(sim_targets()));
  if (rnd.chance(kShortPlanPercent)) {
    c.plan = {"EXTRACT", "PUBLISH"};
    c.reuse_on_rerun = {"EXTRACT"};
  }
  c.max_attempts = static_cast<int>(rnd.between(1, 3));
  c.priority = static_cast<int>(rnd.between(-1, 1));
  if (rnd.chance(kNotBeforePercent))
    c.not_before_ms = bus.now_ms() + rnd.between(1, kNotBeforeMsMax);
  Sent r = bus.send(c, "operator");
  if (!duplicate && r.ok()) enqueued_.push_back(c.id);
  if (!duplicate) expect_status(bus, r, 200, "enqueue of new job " + c.id);
}

void Operator::cancel(SimBus& bus) {
  auto job = live_job(bus);
  if (!job) return;
  Sent r = bus.send(jobs::Cancel{job->id, "operator request"}, "operator");
  auto after = job_now(bus, job->id);
  std::string what = "cancel of " + job->id + " in " + job->state;
  if (job->state == "QUEUED") {
    expect_status(bus, r, 200, what);
    if (r.ok() && after) bus.fail(what + ": still live as " + after->state);
  } else if (job->state == "LEASED" || job->state == "RUNNING") {
    expect_status(bus, r, 200, what);
    if (r.ok() && (!after || after->state != job->state || !after->cancel_requested)) {
      bus.fail(what + ": expected the state kept with cancel requested");
    }
  }
}

void Operator::rerun(SimBus& bus) {
  SimRandom& rnd = bus.random();
  if (enqueued_.empty()) return;
  std::string id = rnd.one_of(enqueued_);
  if (!rnd.chance(kFinishedRerunPercent)) {
    auto job = live_job(bus);
    if (job) id = job->id;
  }
  auto before = job_now(bus, id);
  Sent r = bus.send(jobs::Rerun{id, "late data arrived"}, "operator");
  std::string what = "rerun of " + id + (before ? " in " + before->state : " (finished)");
  // Only jobs whose latest attempt is terminal leave memory.
  expect_status(bus, r, before ? 409 : 200, what);
  auto after = job_now(bus, id);
  if (r.ok() && (!after || after->state != "QUEUED")) bus.fail(what + ": no new QUEUED attempt");
}

void Operator::place_hold(SimBus& bus) {
  SimRandom& rnd = bus.random();
  holds::Place p;
  p.id = "op-h" + std::to_string(next_hold_++);
  p.kind = rnd.chance(50) ? holds::kExecutionStateUnknown : holds::kResultUnknown;
  p.reason = "checking the output of a manual backfill";
  p.target = rnd.one_of(sim_targets());
  int expected = 200;
  if (rnd.chance(kHoldWithJobPercent)) {
    if (auto job = live_job(bus)) {
      p.job = job->id;
      p.target = job->target;
      if (rnd.chance(kBadInputPercent)) {
        p.target += "-elsewhere";  // a job on another target: 422
        expected = 422;
      }
    }
  }
  if (rnd.chance(kBadInputPercent)) {
    p.reason.clear();
    expected = 422;
  }
  Sent r = bus.send(p, "operator");
  expect_status(bus, r, expected, "hold place " + p.id + " on " + p.target);
}

void Operator::release_hold(SimBus& bus) {
  SimRandom& rnd = bus.random();
  auto holds = open_holds(bus);
  if (holds.empty()) return;
  const HoldBrief h = rnd.one_of(holds);
  holds::ReleaseHold c;
  c.id = h.id;
  bool complete = true;
  if (rnd.chance(kEvidencePercent)) c.note = "checked the warehouse: no writer left";
  complete = complete && !c.note.empty();
  if (rnd.chance(kEvidencePercent)) c.execution_stopped = true;
  complete = complete && (h.kind != holds::kExecutionStateUnknown || c.execution_stopped);
  bool with_outcome =
      h.of_stale_attempt ? rnd.chance(kEvidencePercent) : rnd.chance(kBadInputPercent);
  if (with_outcome) c.outcome = rnd.chance(50) ? "SUCCEEDED" : "FAILED";
  complete = complete && with_outcome == h.of_stale_attempt;
  Sent r = bus.send(c, "operator");
  std::string what = "release of " + h.kind + " hold" +
                     (h.of_stale_attempt ? " of a STALE attempt" : "") +
                     (complete ? " with full evidence" : " without the evidence it needs");
  expect_status(bus, r, complete ? 200 : 422, what);
}

}  // namespace runledger::testing
