// Simulation: sending a command and the checks every command gets
// (invariants 3 to 7, fencing, the claim order). See sim_runner.h.
#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "base/sha256.h"
#include "engine/state_loader.h"
#include "tests/engine/command_text.h"
#include "tests/engine/sim_runner.h"
#include "tests/engine/state_digest.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

// Shares of commands sent with an idempotency key, and (per mille) of those
// whose write is made to fail.
constexpr int kKeyedPercent = 5;
constexpr int kWriteFaultPerMille = 3;

// The (job, lease token) of a command that must carry the current lease.
std::optional<std::pair<std::string, std::string>> fenced_token(const Command& c) {
  return std::visit(
      [](const auto& x) -> std::optional<std::pair<std::string, std::string>> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, jobs::Heartbeat> || std::is_same_v<T, jobs::Release> ||
                      std::is_same_v<T, jobs::Start> || std::is_same_v<T, jobs::StepStart> ||
                      std::is_same_v<T, jobs::StepDone> || std::is_same_v<T, jobs::StepFail> ||
                      std::is_same_v<T, jobs::CancelAck> ||
                      std::is_same_v<T, jobs::OutcomeUnknown> || std::is_same_v<T, jobs::Yield>) {
          return std::make_pair(x.job_id, x.lease_token);
        } else {
          return std::nullopt;
        }
      },
      c);
}

bool kind_wanted(const jobs::Claim& c, const std::string& kind) {
  return c.kinds.empty() || std::find(c.kinds.begin(), c.kinds.end(), kind) != c.kinds.end();
}

// The job a claim must get, from the entities alone (not the ready index):
// QUEUED, due, of a wanted kind, on a target no attempt holds and no open
// EXECUTION_STATE_UNKNOWN hold blocks; highest priority, then enqueue order.
std::string best_claim(const State& s, const jobs::Claim& c, int64_t now_ms,
                       std::set<std::string>* unavailable) {
  for (const auto& [id, j] : s.jobs.by_id) {
    auto st = j.latest().state;
    if (st == jobs::AttemptState::kLeased || st == jobs::AttemptState::kRunning) {
      unavailable->insert(j.target);
    }
  }
  for (const auto& [id, h] : s.holds.by_id) {
    if (!h.released && h.kind == holds::kExecutionStateUnknown) unavailable->insert(h.target);
  }
  const jobs::Job* best = nullptr;
  for (const auto& [id, j] : s.jobs.by_id) {
    const jobs::Attempt& a = j.latest();
    int64_t not_before =
        a.number == 1 ? std::max(a.not_before_ms, j.not_before_ms) : a.not_before_ms;
    if (a.state != jobs::AttemptState::kQueued || not_before > now_ms) continue;
    if (!kind_wanted(c, j.kind) || unavailable->count(j.target)) continue;
    if (!best ||
        std::tie(best->priority, j.enqueue_seq) < std::tie(j.priority, best->enqueue_seq)) {
      best = &j;
    }
  }
  return best ? best->id : "";
}

}  // namespace

struct Simulation::Before {
  std::map<std::string, json> named;  // stream -> entity_json
  std::optional<bool> token_current;  // fenced commands: is the token the current lease?
  std::string expected_claim;
  std::set<std::string> unavailable_targets;
  std::map<std::string, std::string> targets;  // job -> target
};

Simulation::Before Simulation::look_before(const Command& c) {
  int64_t now_ms = host_->clock.now_ms();
  return host_->read([&](const State& s) {
    Before b;
    for (const auto& stream : streams_named(c)) b.named[stream] = entity_json(s, stream);
    if (auto fenced = fenced_token(c)) {
      auto it = s.jobs.by_id.find(fenced->first);
      b.token_current = it != s.jobs.by_id.end() &&
                        it->second.latest().lease_token_sha256 == sha256_hex(fenced->second);
    }
    if (const auto* claim = std::get_if<jobs::Claim>(&c)) {
      b.expected_claim = best_claim(s, *claim, now_ms, &b.unavailable_targets);
      for (const auto& [id, j] : s.jobs.by_id) b.targets[id] = j.target;
    }
    return b;
  });
}

Sent Simulation::send(const Command& c, const std::string& actor) {
  Sent sent;
  if (!report_.failure.empty()) return sent;
  ++report_.commands;
  doing_ = describe_command(c) + " by " + actor;
  Before before = look_before(c);
  Request r = rnd_.chance(kKeyedPercent)
                  ? keyed_request(c, "key-" + std::to_string(keys_made_++), doing_)
                  : command_request(c);
  r.actor = actor;
  bool fault = rnd_.chance_per_mille(kWriteFaultPerMille);
  if (fault) ++report_.write_faults;
  host_->store().fail_all_appends(fault);
  Reply reply = host_->engine().execute(r);
  host_->store().fail_all_appends(false);
  json j = body_json(reply);
  sent.status = reply.status;
  if (reply.status == 200 && j.is_object()) {
    sent.body = j.value("body", json());
    for (const auto& t : j.value("events", json::array()))
      sent.events.push_back(t.get<std::string>());
  } else if (j.is_object()) {
    sent.code = j.value("code", "");
    sent.message = j.value("error", "");
    sent.error = j;
  }
  ++report_.outcomes[command_name(c)]
                    [std::to_string(reply.status) + (sent.code.empty() ? "" : "/" + sent.code)];
  LogTail tail = shadow_.catch_up(host_->store());
  if (reply.status >= 400 && reply.status < 500) sent.events = tail.types;
  check_command(c, before, sent, fault, tail);
  std::vector<std::string> streams(tail.streams.begin(), tail.streams.end());
  for (const auto& [stream, ignored] : before.named) streams.push_back(stream);
  check_after(streams);
  if (reply.status >= 400 && tail.types.empty() && report_.failure.empty()) {
    auto now = host_->read([&](const State& s) {
      std::map<std::string, json> out;
      for (const auto& [stream, ignored] : before.named) out[stream] = entity_json(s, stream);
      return out;
    });
    if (now != before.named)
      fail("invariant 6: a refusal (" + reply.body + ") changed its streams");
  }
  if (!r.idempotency_key.empty() && reply.status < 500) remember_keyed(r, c, reply);
  return sent;
}

void Simulation::check_command(const Command& c, const Before& before, const Sent& sent, bool fault,
                               const LogTail& tail) {
  std::string types = json(tail.types).dump();
  if (!tail.error.empty()) return fail("invariant 3: " + tail.error);
  if (sent.status >= 500) {
    if (!fault || sent.status != kInjectedWriteFailure)
      return fail("server error " + std::to_string(sent.status));
    if (!tail.types.empty()) return fail("invariant 5: a failed write, yet the log holds " + types);
    // The sequencer rebuilds from the log before it takes the next request.
    host_->read([](const State&) { return 0; });
    if (!host_->engine().writable())
      return fail("invariant 5: no writes taken after a failed write");
    return;
  }
  if (fault && !tail.types.empty()) return fail("invariant 5: written while the disk failed");
  if (tail.command_ids.size() > 1) return fail("invariant 5: one command, several command ids");
  if (sent.status == 200 && sent.events != tail.types) {
    return fail("invariant 5: the reply names " + json(sent.events).dump() + ", the log holds " +
                types);
  }
  if (sent.status >= 400) {
    for (const auto& t : tail.types) {
      if (!recorded_despite_refusal(t)) return fail("invariant 6: refused, yet recorded " + types);
    }
  }
  if (sent.status == 200 && before.token_current == false) {
    return fail("fencing: accepted with a token that is not the attempt's current lease");
  }
  if (!std::holds_alternative<jobs::Claim>(c) || sent.status != 200) return;
  std::string got = sent.body.is_object() ? sent.body.value("job", "") : "";
  if (got == before.expected_claim) return;
  auto target = before.targets.find(got);
  if (target != before.targets.end() && before.unavailable_targets.count(target->second)) {
    return fail("claim: handed out " + got + " on target " + target->second +
                ", which an attempt or a blocking hold held");
  }
  fail("claim: expected '" + before.expected_claim + "' (priority, enqueue order, due, kind, " +
       "free target), got '" + got + "'");
}

void Simulation::check_after(const std::vector<std::string>& streams) {
  if (!report_.failure.empty()) return;
  std::set<std::string> unique(streams.begin(), streams.end());
  uint64_t durable_seq = host_->store().last_seq();
  std::string err = host_->read([&](const State& s) {
    std::string out;
    const State& folded = shadow_.state();
    if (s.last_seq != folded.last_seq || s.last_hash != folded.last_hash) {
      out += "invariant 3: memory is at seq " + std::to_string(s.last_seq) + ", fold(log) at " +
             std::to_string(folded.last_seq) + " (or the hashes differ); ";
    }
    if (durable_seq != s.last_seq) {
      out += "invariant 4: the state shows seq " + std::to_string(s.last_seq) +
             ", the durable log ends at " + std::to_string(durable_seq) + "; ";
    }
    for (const auto& stream : unique) {
      ++report_.stream_fold_checks;
      json want = entity_json(folded, stream), have = entity_json(s, stream);
      if (want != have) {
        out += "invariant 3: " + stream +
               " differs from fold(log): " + describe_difference(want, have) + "; ";
      }
    }
    return out + checker_.check(s);
  });
  if (!err.empty()) fail(err);
}

void Simulation::check_full(bool load_snapshot, bool replay) {
  if (!report_.failure.empty()) return;
  ++report_.full_fold_checks;
  json live = host_->read([](const State& s) { return state_digest(s); });
  json folded = state_digest(shadow_.state());
  if (live != folded) {
    return fail("invariant 3: the state differs from fold(log): " +
                describe_difference(folded, live));
  }
  for (bool use_snapshot : {true, false}) {
    if (use_snapshot ? !load_snapshot : !replay) continue;
    report_.replays += !use_snapshot;
    State s;
    LoadReport lr;
    LoadOptions lo;
    lo.use_snapshot = use_snapshot;
    Status st = load_state(host_->store(), lo, &s, &lr);
    if (!st.ok()) return fail("invariant 3: replaying the log failed: " + st.ToString());
    json replayed = state_digest(s);
    if (replayed != live) {
      return fail(std::string("invariant 3: a replay ") +
                  (use_snapshot ? "from the snapshot" : "from scratch") +
                  " differs: " + describe_difference(replayed, live));
    }
  }
}

}  // namespace runledger::testing
