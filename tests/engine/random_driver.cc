// RandomDriver: see random_driver.h.
#include "tests/engine/random_driver.h"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <tuple>

#include "tests/engine/command_text.h"
#include "tests/engine/state_digest.h"

namespace runledger::testing {

// What observe() reads of the engine. Not in the anonymous namespace: the
// driver's World, a class with linkage, holds them.
namespace random_driver_world {

struct JobInfo {
  std::string id, kind, target, state, handle, running_step, first_pending;
  std::vector<std::string> plan;
  bool cancel_requested = false;
};
struct ConnectorInfo {
  std::string id, sync_id;
  bool running = false;
  std::vector<std::string> ended;
};
struct HoldInfo {
  std::string id;
  bool stale_attempt = false;  // the hold of a STALE attempt: its release needs an outcome
};

}  // namespace random_driver_world

namespace {

enum Op : uint8_t {
  kEnqueue,
  kClaim,
  kHeartbeat,
  kRelease,
  kStart,
  kStepStart,
  kStepDone,
  kStepFail,
  kCancel,
  kCancelAck,
  kOutcomeUnknown,
  kReattach,
  kYield,
  kRerun,
  kConnectorCreate,
  kConnectorUpdate,
  kConnectorDelete,
  kConnectorSync,
  kConnectorAbort,
  kConnectorProgress,
  kConnectorSucceeded,
  kConnectorFailed,
  kHoldPlace,
  kHoldRelease,
  kTick,
  kAdvance,
  kOpCount
};

// How often each Op is chosen, relative to the others. Advancing jobs on
// their happy path weighs most, so many run through whole lifecycles.
int weight(Op op) {
  switch (op) {
    case kAdvance:
      return 30;
    case kClaim:
      return 8;
    case kStepStart:
    case kStepDone:
    case kTick:
      return 6;
    case kEnqueue:
    case kStart:
    case kHoldRelease:
      return 4;
    case kHeartbeat:
    case kStepFail:
    case kCancel:
    case kReattach:
    case kRerun:
    case kConnectorSync:
    case kConnectorProgress:
      return 3;
    case kRelease:
    case kCancelAck:
    case kOutcomeUnknown:
    case kYield:
    case kConnectorCreate:
    case kConnectorUpdate:
    case kConnectorSucceeded:
    case kHoldPlace:
      return 2;
    case kConnectorDelete:
    case kConnectorAbort:
    case kConnectorFailed:
      return 1;
    case kOpCount:
      return 0;
  }
  return 0;
}

const std::vector<std::string> kKinds = {"a", "b", "c"};
const std::vector<std::string> kTargets = {"t0", "t1", "t2", "t3", "t4", "t5"};
const std::vector<int64_t> kDriverLeasesS = {1, 5, 30, 60, 300};
// Clock jumps of a tick, small ones more often than big ones.
const std::vector<int64_t> kClockJumpsMs = {0,     0,      1'000,  1'000,  5'000,
                                            5'000, 31'000, 31'000, 61'000, 3'600'000};
const std::vector<std::string> kDocuments = {"d0", "d1", "d2", "d3", "d4", "d5"};
// Shares of commands sent with an idempotency key, and of steps that send
// an earlier keyed request again.
constexpr int kKeyedCommandPercent = 10;
constexpr int kRepeatPercent = 3;

using random_driver_world::ConnectorInfo;
using random_driver_world::HoldInfo;
using random_driver_world::JobInfo;

JobInfo job_info(const jobs::Job& j) {
  JobInfo out{
      j.id, j.kind, j.target, jobs::to_string(j.latest().state), j.latest().execution_handle,
      "",   "",     j.plan,   j.latest().cancel_requested};
  for (const auto& st : j.latest().steps) {
    if (st.state == jobs::StepState::kRunning) out.running_step = st.name;
    if (st.state == jobs::StepState::kPending && out.first_pending.empty()) {
      out.first_pending = st.name;
    }
  }
  return out;
}

// A hold whose attempt is STALE: its release must say how that attempt ended.
bool is_stale_hold(const State& s, const holds::Hold& h) {
  auto it = s.jobs.by_id.find(h.job);
  if (it == s.jobs.by_id.end()) return false;
  const jobs::Attempt* a = it->second.attempt(h.attempt);
  return a && a->state == jobs::AttemptState::kStale;
}

// What may not change once an attempt is terminal.
nlohmann::json terminal_part(const jobs::Attempt& a) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& st : a.steps) {
    steps.push_back({st.name, jobs::to_string(st.state), st.finished_at_ms, st.output, st.error});
  }
  return {{"state", jobs::to_string(a.state)},
          {"finished_at_ms", a.finished_at_ms},
          {"error", a.error},
          {"cancel_reason", a.cancel_reason},
          {"steps", steps},
          {"last_completed_step", a.last_completed_step},
          {"cleanup_needed", a.cleanup_needed}};
}

using JobFit = std::function<bool(const JobInfo&)>;

bool in_state(const JobInfo& j, std::initializer_list<const char*> states) {
  return std::any_of(states.begin(), states.end(), [&](const char* s) { return j.state == s; });
}

// A job for a command: mostly a live one that `fits` it, sometimes any job
// ever enqueued (finished ones are loaded from the log), rarely an unknown one.
std::string pick_job(const std::vector<JobInfo>& live, const JobFit& fits,
                     const std::vector<std::string>& all, std::mt19937_64& rng) {
  std::vector<const JobInfo*> fit;
  for (const auto& j : live) {
    if (fits(j)) fit.push_back(&j);
  }
  int roll = static_cast<int>(rng() % 100);
  if (!fit.empty() && roll < 85) return fit[rng() % fit.size()]->id;
  if (!all.empty() && roll < 98) return all[rng() % all.size()];
  return "ghost";
}

// The jobs each worker command is meant for.
const std::map<int, JobFit>& worker_fits() {
  static const std::map<int, JobFit> fits = {
      {kHeartbeat,
       [](const JobInfo& j) {
         return in_state(j, {"LEASED", "RUNNING"});
       }},
      {kRelease, [](const JobInfo& j) { return in_state(j, {"LEASED"}); }},
      {kStart, [](const JobInfo& j) { return in_state(j, {"LEASED"}); }},
      {kStepStart,
       [](const JobInfo& j) { return in_state(j, {"RUNNING"}) && j.running_step.empty(); }},
      {kStepDone,
       [](const JobInfo& j) { return in_state(j, {"RUNNING"}) && !j.running_step.empty(); }},
      {kStepFail,
       [](const JobInfo& j) { return in_state(j, {"RUNNING"}) && !j.running_step.empty(); }},
      {kCancelAck,
       [](const JobInfo& j) {
         return in_state(j, {"LEASED", "RUNNING"}) && j.cancel_requested;
       }},
      {kOutcomeUnknown, [](const JobInfo& j) { return in_state(j, {"RUNNING"}); }},
      {kReattach,
       [](const JobInfo& j) {
         return in_state(j, {"RUNNING", "STALE"});
       }},
      // Mostly between steps, where a yield is allowed; sometimes during one.
      {kYield, [](const JobInfo& j) { return in_state(j, {"RUNNING"}); }}};
  return fits;
}

}  // namespace

struct RandomDriver::World {
  std::vector<JobInfo> jobs;
  std::vector<ConnectorInfo> connectors;
  std::vector<HoldInfo> holds;
};

RandomDriver::RandomDriver(EngineHarness& h, uint64_t seed, int fault_percent)
    : h_(h), rng_(seed), fault_percent_(fault_percent) {}

RandomDriver::World RandomDriver::observe() {
  return inspect(h_.engine(), [](const State& s) {
    World w;
    for (const auto& [id, j] : s.jobs.by_id) w.jobs.push_back(job_info(j));
    for (const auto& [id, c] : s.connectors.by_id) {
      ConnectorInfo ci{id, c.sync_id, c.running(), {}};
      for (const auto& e : c.ended_syncs) ci.ended.push_back(e.sync_id);
      w.connectors.push_back(ci);
    }
    // Ordered by what they are about, not by id: ids the engine made are random.
    std::vector<const holds::Hold*> hs;
    for (const auto& [id, h] : s.holds.by_id) hs.push_back(&h);
    std::sort(hs.begin(), hs.end(), [](const holds::Hold* a, const holds::Hold* b) {
      return std::tie(a->target, a->job, a->attempt, a->placed_at_ms, a->kind) <
             std::tie(b->target, b->job, b->attempt, b->placed_at_ms, b->kind);
    });
    for (const auto* h : hs) w.holds.push_back({h->id, is_stale_hold(s, *h)});
    return w;
  });
}

std::string RandomDriver::token_for(const std::string& job) {
  auto it = tokens_.find(job);
  if (it != tokens_.end() && chance(85)) return it->second;
  return fresh_token();
}

Command RandomDriver::enqueue() {
  jobs::Enqueue c =
      enqueue_command("j" + std::to_string(next_job_++), one_of(kKinds), one_of(kTargets));
  if (chance(40)) {
    c.plan = {"X", "Y"};
    c.reuse_on_rerun = {"X"};
  }
  c.max_attempts = 1 + static_cast<int>(below(3));
  c.priority = static_cast<int>(below(3)) - 1;
  if (chance(20)) {
    c.not_before_ms = h_.clock.now_ms() + 1000 * (1 + static_cast<int64_t>(below(60)));
  }
  if (chance(5) && !job_ids_.empty()) {
    c.id = one_of(job_ids_);  // an id already taken
  } else {
    job_ids_.push_back(c.id);
  }
  return c;
}

Command RandomDriver::job_command(const World& w, int op) {
  const JobFit live = [](const JobInfo&) { return true; };
  switch (op) {
    case kEnqueue:
      return enqueue();
    case kClaim: {
      std::vector<std::string> kinds;
      if (chance(50)) kinds = {one_of(kKinds)};
      return jobs::Claim{"w" + std::to_string(below(4)), kinds, one_of(kDriverLeasesS),
                         fresh_token()};
    }
    case kCancel:
      return jobs::Cancel{pick_job(w.jobs, live, job_ids_, rng_), "operator"};
    case kRerun: {
      std::vector<std::string> gone;
      for (const auto& id : job_ids_) {
        bool in_memory =
            std::any_of(w.jobs.begin(), w.jobs.end(), [&](const JobInfo& j) { return j.id == id; });
        if (!in_memory) gone.push_back(id);
      }
      std::string id =
          !gone.empty() && chance(80) ? one_of(gone) : pick_job(w.jobs, live, job_ids_, rng_);
      return jobs::Rerun{id, "late data"};
    }
    default:
      break;
  }
  return worker_command(w, op, pick_job(w.jobs, worker_fits().at(op), job_ids_, rng_));
}

Command RandomDriver::worker_command(const World& w, int op, const std::string& job) {
  JobInfo info;
  for (const auto& j : w.jobs) {
    if (j.id == job) info = j;
  }
  std::vector<std::string> plan = info.plan.empty() ? std::vector<std::string>{"FETCH"} : info.plan;
  std::string token = token_for(job);
  auto step_name = [&](const std::string& likely) {
    if (chance(5)) return std::string("NOPE");
    return !likely.empty() && chance(80) ? likely : one_of(plan);
  };
  std::optional<int64_t> lease;
  if (chance(50)) lease = one_of(kDriverLeasesS);
  switch (op) {
    case kHeartbeat:
      return jobs::Heartbeat{job, token, lease};
    case kRelease:
      return jobs::Release{job, token};
    case kStart:
      return jobs::Start{job, token, "handle-" + std::to_string(below(1000))};
    case kStepStart:
      return jobs::StepStart{job, step_name(info.first_pending), token};
    case kStepDone:
      return jobs::StepDone{job, step_name(info.running_step), token,
                            chance(50) ? R"({"rows":3})" : ""};
    case kStepFail:
      return jobs::StepFail{job, step_name(info.running_step), token, "boom", chance(50)};
    case kCancelAck:
      return jobs::CancelAck{job, token};
    case kOutcomeUnknown:
      return jobs::OutcomeUnknown{
          job, token, chance(50) ? holds::kExecutionStateUnknown : holds::kResultUnknown,
          "submission reply lost"};
    case kYield:
      return jobs::Yield{job, token, chance(50) ? "redeploy" : ""};
    default:
      break;
  }
  jobs::Reattach r;
  r.job_id = job;
  r.worker = "w" + std::to_string(below(4));
  r.execution_handle = chance(85) ? info.handle : "other-handle";
  r.observed = chance(60) ? "running" : "exited";
  if (r.observed == "exited") r.exit_code = static_cast<int>(below(2));
  // An observed exit of one step: mostly the running one.
  if (r.observed == "exited" && chance(50)) {
    r.step = step_name(info.running_step);
    r.retryable = chance(50);
    if (chance(50)) r.output = R"({"rows":2})";
  }
  r.lease_s = lease;
  r.lease_token = fresh_token();
  return r;
}

Command RandomDriver::connector_command(const World& w, int op) {
  if (op == kConnectorCreate || connector_ids_.empty()) {
    std::string id = chance(90) || connector_ids_.empty() ? "c" + std::to_string(next_connector_++)
                                                          : one_of(connector_ids_);
    connector_ids_.push_back(id);
    return connectors::Create{id, "source " + id, chance(30) ? (chance(50) ? 30 : 120) : 0};
  }
  std::string id = one_of(connector_ids_);
  const ConnectorInfo* info = nullptr;
  for (const auto& c : w.connectors) {
    if (c.id == id) info = &c;
  }
  std::string sync_id = "s-unknown";
  if (info && !info->sync_id.empty() && chance(80)) {
    sync_id = info->sync_id;
  } else if (info && !info->ended.empty()) {
    sync_id = one_of(info->ended);
  }
  connectors::DocumentReport docs;
  for (int i = static_cast<int>(below(4)); i > 0; --i) {
    switch (below(4)) {
      case 0:
        docs.pending.push_back(one_of(kDocuments));
        break;
      case 1:
        docs.running.push_back(one_of(kDocuments));
        break;
      case 2:
        docs.indexed.push_back(one_of(kDocuments));
        break;
      default:
        docs.failed.emplace_back(one_of(kDocuments), "parse error");
        break;
    }
  }
  switch (op) {
    case kConnectorUpdate: {
      connectors::Update u{id, std::nullopt, std::nullopt, std::nullopt};
      if (chance(70)) u.status = chance(50) ? "active" : "paused";
      if (chance(20)) u.name = "renamed " + id;
      if (chance(20)) u.sync_schedule_s = chance(50) ? 0 : 60;
      return u;
    }
    case kConnectorDelete:
      return connectors::Delete{id};
    case kConnectorSync:
      return connectors::StartSync{id, "s" + std::to_string(rng_() % 1'000'000)};
    case kConnectorAbort:
      return connectors::AbortSync{id};
    case kConnectorProgress:
      return connectors::ReportProgress{id, sync_id, docs};
    case kConnectorSucceeded:
      return connectors::ReportSucceeded{id, sync_id, docs};
    default:
      return connectors::ReportFailed{id, sync_id, "source unreachable"};
  }
}

Command RandomDriver::hold_command(const World& w, int op) {
  if (op == kHoldPlace) {
    holds::Place p;
    p.id = chance(95) ? "h" + std::to_string(next_hold_++) : "h0";
    p.kind = chance(50) ? holds::kExecutionStateUnknown : holds::kResultUnknown;
    p.reason = chance(95) ? "operator check" : "";
    p.target = one_of(kTargets);
    if (!w.jobs.empty() && chance(40)) {
      const JobInfo& j = one_of(w.jobs);
      p.job = j.id;
      p.target = j.target;
    }
    return p;
  }
  holds::ReleaseHold r;
  HoldInfo info{"h" + std::to_string(below(next_hold_ + 1)), false};
  if (!w.holds.empty() && chance(85)) info = one_of(w.holds);
  r.id = info.id;
  r.note = chance(90) ? "checked by the operator" : "";
  if (chance(85)) r.execution_stopped = true;
  if (info.stale_attempt ? chance(85) : chance(10)) {
    r.outcome = chance(50) ? "SUCCEEDED" : "FAILED";
  }
  return r;
}

Command RandomDriver::advance(const World& w) {
  if (w.jobs.empty()) return enqueue();
  // Mostly the jobs that hold a target: finishing them frees it for the queue.
  std::vector<JobInfo> busy;
  for (const auto& j : w.jobs) {
    if (j.state != "QUEUED") busy.push_back(j);
  }
  const JobInfo& j = !busy.empty() && chance(70) ? one_of(busy) : one_of(w.jobs);
  auto known = tokens_.find(j.id);
  std::string token = known != tokens_.end() ? known->second : fresh_token();
  std::string worker = "w" + std::to_string(below(4));
  if (j.state == "QUEUED")
    return jobs::Claim{worker, {j.kind}, one_of(kDriverLeasesS), fresh_token()};
  if (j.state == "LEASED") return jobs::Start{j.id, token, "handle-" + j.id};
  if (j.state == "RUNNING" && j.running_step.empty()) {
    return jobs::StepStart{j.id, j.first_pending, token};
  }
  if (j.state == "RUNNING" && chance(90)) return jobs::StepDone{j.id, j.running_step, token, ""};
  if (j.state == "RUNNING") return jobs::StepFail{j.id, j.running_step, token, "boom", chance(50)};
  // STALE: the worker comes back and says what it sees.
  jobs::Reattach r;
  r.job_id = j.id;
  r.worker = worker;
  r.execution_handle = j.handle;
  r.observed = chance(50) ? "running" : "exited";
  if (r.observed == "exited") r.exit_code = static_cast<int>(below(2));
  if (r.observed == "exited" && !j.running_step.empty() && chance(50)) r.step = j.running_step;
  r.lease_token = fresh_token();
  return r;
}

Command RandomDriver::choose(const World& w) {
  int total = 0;
  for (int op = 0; op < kOpCount; ++op) total += weight(static_cast<Op>(op));
  int roll = static_cast<int>(below(total));
  int op = 0;
  while (roll >= weight(static_cast<Op>(op))) roll -= weight(static_cast<Op>(op++));
  if (op == kAdvance) return advance(w);
  if (op <= kRerun) return job_command(w, op);
  if (op <= kConnectorFailed) return connector_command(w, op);
  if (op <= kHoldRelease) return hold_command(w, op);
  // A tick: the clock jumps, then one of the commands the engine's timer sends.
  h_.clock.advance_ms(one_of(kClockJumpsMs));
  if (chance(50)) return connectors::RunSchedule{};
  return jobs::ExpireLeases{};
}

std::string RandomDriver::step() {
  if (!keyed_.empty() && chance(kRepeatPercent)) return repeat_keyed();
  World w = observe();
  Command c = choose(w);
  last_ = describe_command(c);
  bool system = std::holds_alternative<jobs::ExpireLeases>(c) ||
                std::holds_alternative<connectors::RunSchedule>(c);
  std::string key;
  if (!system && chance(kKeyedCommandPercent)) key = "key-" + std::to_string(keyed_.size());
  Request r = key.empty() ? command_request(c) : keyed_request(c, key, last_);
  if (system) r.actor = "system";
  bool fault = fault_percent_ > 0 && chance(fault_percent_);
  uint64_t seq_before = h_.store().last_seq();
  if (fault) h_.faults().fail_all_appends(true);
  Reply reply = h_.engine().execute(std::move(r));
  if (fault) h_.faults().fail_all_appends(false);
  count(c, reply);
  std::string err = check_reply(reply, seq_before, fault);
  if (!err.empty()) return last_ + ": " + err;
  if (!key.empty() && reply.status < 500) keyed_.push_back({key, c, last_, reply});
  learn(c, reply);
  err = check_state();
  return err.empty() ? "" : last_ + ": " + err;
}

// Invariant 7: the same key and request again gets the first reply and acts
// on nothing; the key with another request is refused as reused.
std::string RandomDriver::repeat_keyed() {
  const Keyed& k = one_of(keyed_);
  bool other = chance(20);
  last_ = (other ? "another request with " : "repeat of ") + k.key + " (" + k.text + ")";
  uint64_t seq_before = h_.store().last_seq();
  Reply reply =
      h_.engine().execute(keyed_request(k.command, k.key, other ? k.text + "#2" : k.text));
  ++commands_;
  ++outcomes_[other ? "key.reused" : "key.repeat"][std::to_string(reply.status)];
  if (h_.store().last_seq() != seq_before) return last_ + ": appended events";
  if (other) {
    if (reply.status == 409 && body_json(reply).value("code", "") == "idempotency_key_reused") {
      return "";
    }
    return last_ + ": expected 409 idempotency_key_reused, got " + std::to_string(reply.status);
  }
  if (reply.status != k.reply.status || reply.body != k.reply.body) {
    return last_ + ": expected " + std::to_string(k.reply.status) + " " + k.reply.body + ", got " +
           std::to_string(reply.status) + " " + reply.body;
  }
  return "";
}

void RandomDriver::count(const Command& c, const Reply& r) {
  ++commands_;
  std::string code = r.status >= 400 ? "/" + body_json(r).value("code", "?") : "";
  ++outcomes_[command_name(c)][std::to_string(r.status) + code];
}

std::string RandomDriver::coverage() const {
  std::string out;
  for (const auto& [name, by_status] : outcomes_) {
    out += "\n  " + name;
    for (const auto& [status, n] : by_status) {
      out += " " + status + ":" + std::to_string(n);
    }
  }
  return out;
}

std::string RandomDriver::check_reply(const Reply& r, uint64_t seq_before, bool fault) {
  if (fault && r.status == 503) {
    // The write failed: nothing of the command may be in the log.
    if (h_.store().last_seq() != seq_before) return "failed write, yet the log grew";
    return "";
  }
  if (r.status >= 500) return "server error " + std::to_string(r.status) + " " + r.body;
  if (r.status < 400) return "";
  std::string bad;
  Status st = h_.store().read_range(seq_before, 0, [&](const fb::Event& e, std::string_view) {
    std::string type(event_type_name(e.payload_type()));
    if (!recorded_despite_refusal(type)) bad += type + " ";
    return true;
  });
  if (!st.ok()) return "reading the log failed: " + st.ToString();
  if (!bad.empty()) return "refused (" + r.body + ") but recorded " + bad;
  return "";
}

void RandomDriver::learn(const Command& c, const Reply& r) {
  if (r.status != 200) return;
  if (const auto* claim = std::get_if<jobs::Claim>(&c)) {
    std::string job = claimed_job(r);
    if (!job.empty()) tokens_[job] = claim->lease_token;
  } else if (const auto* re = std::get_if<jobs::Reattach>(&c)) {
    // A step's exit 0 also runs the attempt on under the command's token.
    if (re->observed == "running" || !re->step.empty()) tokens_[re->job_id] = re->lease_token;
  }
}

std::string RandomDriver::check_state() {
  auto found = inspect(h_.engine(), [&](const State& s) {
    std::string out = one_holder_per_target_violation(s);
    for (const auto& [id, j] : s.jobs.by_id) {
      for (size_t i = 0; i < j.attempts.size(); ++i) {
        const jobs::Attempt& a = j.attempts[i];
        if (a.number != static_cast<int>(i + 1)) {
          out += "job " + id + " attempt " + std::to_string(i + 1) + " is numbered " +
                 std::to_string(a.number) + "; ";
        }
        if (!jobs::is_terminal(a.state)) continue;
        auto part = terminal_part(a);
        auto [it, fresh] = terminal_.emplace(std::make_pair(id, a.number), part);
        if (!fresh && it->second != part) {
          out += "terminal attempt " + std::to_string(a.number) + " of job " + id +
                 " changed: " + describe_difference(it->second, part) + "; ";
        }
      }
    }
    return out;
  });
  return found;
}

}  // namespace runledger::testing
