// Simulation: the run loop, the actors' turns, the clock and timer, restarts
// and repeated idempotency keys. The per-command checks are in
// sim_command_checks.cc. See sim_runner.h.
#include "tests/engine/sim_runner.h"

#include <algorithm>

#include "engine/state_loader.h"
#include "tests/engine/state_digest.h"

namespace runledger::testing {
namespace {

constexpr int kSimWorkers = 6;
constexpr size_t kLiveJobsMax = 40;
constexpr uint64_t kSimSnapshotEveryEvents = 1000;
// What one step does, out of 1000.
constexpr int kWorkerTurns = 470;
constexpr int kEnqueueTurns = 90;
constexpr int kCancelTurns = 15;
constexpr int kRerunTurns = 20;
constexpr int kHoldPlaceTurns = 15;
constexpr int kHoldReleaseTurns = 35;
constexpr int kConnectorTurns = 135;
constexpr int kClockTurns = 165;
constexpr int kRepeatTurns = 20;
constexpr int kJumpTurns = 3;
constexpr int kRestartTurns = 1;
constexpr int64_t kSmallStepMsMin = 50;
constexpr int64_t kSmallStepMsMax = 3'000;
constexpr int64_t kJumpMsMin = 60'000;
constexpr int64_t kJumpMsMax = 2 * 3'600'000;
constexpr int kJumpOnTimePercent = 25;
// How long the engine stays down across a restart.
constexpr int64_t kDownMsMax = 10 * 60'000;
// Share of small clock steps after which the timer fires late (at the next
// step): commands then meet leases past their expiry but not yet expired.
constexpr int kTimerLagPercent = 15;
// A timer firing that leaves something due is retried this often before
// the simulation calls it a missed expiry (one ExpireLeases expires 256).
constexpr int kTicksPerFireMax = 8;
constexpr int kDueInstantsPerAdvanceMax = 100'000;
constexpr size_t kKeyedKept = 256;
constexpr int kOtherRequestPercent = 20;
// How long a key is promised to be kept (docs/api.md); older ones may be purged.
constexpr int64_t kKeyKeptMs = 24 * 3'600'000;

const std::set<std::string> kRestartDrops = {"connectors", "connector_indexes", "last_seq",
                                             "last_hash"};

EngineOptions sim_engine_options() {
  EngineOptions o = test_engine_options();
  o.snapshot_every_events = kSimSnapshotEveryEvents;
  return o;
}

}  // namespace

std::string SimReport::coverage() const {
  std::string out;
  for (const auto& [name, by_status] : outcomes) {
    out += "\n  " + name;
    for (const auto& [status, n] : by_status) out += " " + status + ":" + std::to_string(n);
  }
  out += "\n  events:";
  for (const auto& [type, n] : event_types) out += " " + type + ":" + std::to_string(n);
  return out;
}

Simulation::Simulation(SimOptions options)
    : options_(options),
      rnd_(options.seed),
      host_(std::make_unique<SimHost>(sim_engine_options())) {
  for (int i = 0; i < kSimWorkers; ++i) {
    const auto& kinds = sim_kinds();
    // Each worker knows two of the kinds, so some jobs wait for the right one.
    workers_.emplace_back(
        "w" + std::to_string(i),
        std::vector<std::string>{kinds[i % kinds.size()], kinds[(i + 1) % kinds.size()]});
  }
  report_.seed = options.seed;
}

Simulation::~Simulation() = default;

void Simulation::fail(const std::string& what) {
  if (!report_.failure.empty()) return;
  report_.failure = "seed " + std::to_string(options_.seed) + ", step " +
                    std::to_string(report_.steps) + " (" + doing_ + "): " + what;
}

SimReport Simulation::run() {
  while (report_.commands < options_.commands && report_.failure.empty()) {
    ++report_.steps;
    step();
    if (!report_.failure.empty()) break;
    if (report_.steps % options_.digest_check_every == 0) {
      check_full(report_.steps % options_.full_check_every == 0,
                 report_.steps % options_.replay_check_every == 0);
    }
  }
  if (report_.failure.empty()) check_full(true, true);
  report_.invariant_checks = checker_.checks();
  report_.fingerprint = log_fingerprint(host_->store());
  report_.events = report_.fingerprint.events;
  report_.event_types = shadow_.types_seen();
  return report_;
}

void Simulation::step() {
  int roll = static_cast<int>(rnd_.below(1000));
  auto turn = [&roll](int share) { return (roll -= share) < 0; };
  if (turn(kWorkerTurns)) return workers_[rnd_.below(workers_.size())].act(*this);
  if (turn(kEnqueueTurns)) return operator_.enqueue(*this, kLiveJobsMax);
  if (turn(kCancelTurns)) return operator_.cancel(*this);
  if (turn(kRerunTurns)) return operator_.rerun(*this);
  if (turn(kHoldPlaceTurns)) return operator_.place_hold(*this);
  if (turn(kHoldReleaseTurns)) return operator_.release_hold(*this);
  if (turn(kConnectorTurns)) return fleet_.act(*this);
  if (turn(kClockTurns)) {
    int64_t ms = rnd_.between(kSmallStepMsMin, kSmallStepMsMax);
    if (rnd_.chance(kTimerLagPercent)) return host_->clock.advance_ms(ms);
    return advance_clock(ms, true);
  }
  if (turn(kRepeatTurns)) return repeat_keyed();
  if (turn(kJumpTurns)) {
    // A big jump: the timer either kept up, or the process stalled through it.
    return advance_clock(rnd_.between(kJumpMsMin, kJumpMsMax), rnd_.chance(kJumpOnTimePercent));
  }
  if (turn(kRestartTurns)) return restart();
  advance_clock(rnd_.between(kSmallStepMsMin, kSmallStepMsMax), true);
}

int64_t Simulation::next_due_ms() {
  return host_->read([](const State& s) {
    int64_t a = jobs::next_due_ms(s), b = connectors::next_due_ms(s);
    if (a == 0 || b == 0) return std::max(a, b);
    return std::min(a, b);
  });
}

void Simulation::advance_clock(int64_t ms, bool timer_on_time) {
  ManualClock& clock = host_->clock;
  const int64_t target = clock.now_ms() + ms;
  for (int i = 0; timer_on_time && i < kDueInstantsPerAdvanceMax && report_.failure.empty(); ++i) {
    int64_t due = next_due_ms();
    if (due == 0 || due > target) break;
    if (due > clock.now_ms()) clock.set_ms(due);
    fire_timer();
  }
  clock.set_ms(target);
  fire_timer();
}

void Simulation::fire_timer() {
  int64_t now = host_->clock.now_ms();
  doing_ = "timer at " + std::to_string(now);
  ++report_.timer_fires;
  for (int i = 0; i < kTicksPerFireMax && report_.failure.empty(); ++i) {
    host_->engine().tick();
    report_.commands += 2;  // ExpireLeases and RunSchedule
    LogTail tail = shadow_.catch_up(host_->store());
    if (!tail.error.empty()) return fail("invariant 3: " + tail.error);
    check_after({tail.streams.begin(), tail.streams.end()});
    int64_t due = next_due_ms();
    if (due == 0 || due > now) return;
  }
  fail("timer: something due at " + std::to_string(next_due_ms()) + " is still due at " +
       std::to_string(now) + " after " + std::to_string(kTicksPerFireMax) + " ticks");
}

void Simulation::restart() {
  doing_ = "engine restart";
  ++report_.restarts;
  auto before = host_->read([](const State& s) { return state_digest(s); });
  host_->restart(rnd_.between(0, kDownMsMax));
  LogTail tail = shadow_.catch_up(host_->store());
  if (!tail.error.empty()) return fail("invariant 3: " + tail.error);
  check_after({tail.streams.begin(), tail.streams.end()});
  auto after = host_->read([](const State& s) { return state_digest(s); });
  for (const auto& key : kRestartDrops) {
    before.erase(key);
    after.erase(key);
  }
  // Only the schedule's gap records may change what a restart loads.
  if (before != after) {
    return fail("invariant 3: the state after a restart differs: " +
                describe_difference(before, after));
  }
  check_full(true, false);
  fire_timer();  // the timer arms at start and fires for what fell due
}

void Simulation::repeat_keyed() {
  int64_t now_ms = host_->clock.now_ms();
  while (!keyed_.empty() && now_ms - keyed_.front().at_ms >= kKeyKeptMs) keyed_.pop_front();
  if (keyed_.empty()) return;
  const Keyed& k = keyed_[rnd_.below(keyed_.size())];
  bool other = rnd_.chance(kOtherRequestPercent);
  doing_ = (other ? "another request with key " : "repeat of key ") + k.key + " (" + k.text + ")";
  uint64_t seq_before = host_->store().last_seq();
  Reply r =
      host_->engine().execute(keyed_request(k.command, k.key, other ? k.text + "#2" : k.text));
  ++report_.commands;
  ++report_.outcomes[other ? "key.reused" : "key.repeat"][std::to_string(r.status)];
  if (host_->store().last_seq() != seq_before) return fail("invariant 7: it appended events");
  if (other && (r.status != 409 || body_json(r).value("code", "") != "idempotency_key_reused")) {
    return fail("invariant 7: expected 409 idempotency_key_reused, got " +
                std::to_string(r.status) + " " + r.body);
  }
  if (!other && (r.status != k.reply.status || r.body != k.reply.body)) {
    return fail("invariant 7: expected the first reply " + std::to_string(k.reply.status) + " " +
                k.reply.body + ", got " + std::to_string(r.status) + " " + r.body);
  }
}

void Simulation::remember_keyed(const Request& r, const Command& c, const Reply& reply) {
  keyed_.push_back({r.idempotency_key, c, doing_, reply, host_->clock.now_ms()});
  if (keyed_.size() > kKeyedKept) keyed_.pop_front();
}

SimReport simulate(const SimOptions& options) {
  Simulation sim(options);
  return sim.run();
}

}  // namespace runledger::testing
