// Deciders of the lease: claim, heartbeat, release and the engine's lease
// expiry (docs/domain.md 1.2 to 1.4). A lease holds until its expiry is recorded:
// a heartbeat that arrives after lease_expires_at but before ExpireLeases ran
// still extends it, since nobody else can have the target meanwhile.
#include <fmt/format.h>

#include <algorithm>

#include "base/sha256.h"
#include "base/time_text.h"
#include "events/event_codec.h"
#include "projections/job_decide_common.h"

namespace runledger::jobs {

namespace {

constexpr int64_t kMsPerS = 1000;

bool kind_wanted(const Claim& c, const std::string& kind) {
  return c.kinds.empty() || std::find(c.kinds.begin(), c.kinds.end(), kind) != c.kinds.end();
}

// The first job in ready order that this claim may take, or nullptr.
const Job* best_ready(const State& s, const Claim& c, int64_t now_ms) {
  for (const ReadyKey& key : s.jobs.ready) {
    const Job* j = detail::find_job(s, key.job_id);
    if (j == nullptr) continue;
    const Attempt& a = j->latest();
    if (a.not_before_ms > now_ms || !kind_wanted(c, j->kind)) continue;
    if (s.jobs.holder.count(j->target) || detail::blocking_hold_id(s, j->target)) continue;
    return j;
  }
  return nullptr;
}

// What a lease that ran out turns the latest attempt into (the 1.4 table).
void expire_one(Decision& d, const Job& j, const Context& ctx) {
  const Attempt& a = j.latest();
  fb::LeaseExpiredT ev;
  ev.attempt = a.number;
  ev.worker = a.worker;
  ev.state = to_string(a.state);
  ev.lease_expires_at_ms = a.lease_expires_at_ms;
  d.emit(job_stream(j.id), std::move(ev));
  if (a.state == AttemptState::kLeased) {
    if (a.cancel_requested) {
      d.emit(job_stream(j.id), detail::cancellation(j, "lease_expired", {}));
    }
    return;
  }
  std::string why = fmt::format("lease of worker {} expired at {} while RUNNING", a.worker,
                                format_time_ms(a.lease_expires_at_ms));
  detail::emit_stale(d, j, ctx, "lease_expired", holds::kExecutionStateUnknown, why, {});
}

}  // namespace

Decision decide(const State& s, const Claim& c, const Context& ctx) {
  Decision d;
  int64_t lease_s = 0;
  if (!detail::resolve_lease_s(c.lease_s, ctx.policy->lease_default_s, *ctx.policy, &lease_s, &d)) {
    return d;
  }
  if (c.lease_token.empty()) return detail::invalid_field("lease_token", "lease_token is empty");
  const Job* j = best_ready(s, c, ctx.now_ms);
  if (j == nullptr) return d;
  fb::JobLeasedT ev;
  ev.attempt = j->latest().number;
  ev.worker = c.worker;
  ev.lease_token_sha256 = sha256_hex(c.lease_token);
  ev.lease_s = static_cast<int32_t>(lease_s);
  ev.lease_expires_at_ms = ctx.now_ms + lease_s * kMsPerS;
  d.emit(job_stream(j->id), std::move(ev));
  d.body = {{"job", j->id}};
  return d;
}

Decision decide(const State& s, const Heartbeat& c, const Context& ctx) {
  Decision d;
  const Job* j = detail::worker_gate(s, c.job_id, detail::kCmdHeartbeat, c.lease_token, &d);
  if (j == nullptr) return d;
  const Attempt& a = j->latest();
  int64_t lease_s = 0;
  if (!detail::resolve_lease_s(c.lease_s, a.lease_s, *ctx.policy, &lease_s, &d)) return d;
  fb::LeaseRenewedT ev;
  ev.attempt = a.number;
  ev.worker = a.worker;
  ev.lease_s = static_cast<int32_t>(lease_s);
  ev.lease_expires_at_ms = ctx.now_ms + lease_s * kMsPerS;
  d.emit(job_stream(j->id), std::move(ev));
  return d;
}

Decision decide(const State& s, const Release& c, const Context& /*ctx*/) {
  Decision d;
  const Job* j = detail::worker_gate(s, c.job_id, detail::kCmdRelease, c.lease_token, &d);
  if (j == nullptr) return d;
  const Attempt& a = j->latest();
  fb::LeaseReleasedT ev;
  ev.attempt = a.number;
  ev.worker = a.worker;
  d.emit(job_stream(j->id), std::move(ev));
  // Given back with a cancel pending: nobody is to run it any more.
  if (a.cancel_requested) d.emit(job_stream(j->id), detail::cancellation(*j, "release", a.worker));
  return d;
}

Decision decide(const State& s, const ExpireLeases& /*c*/, const Context& ctx) {
  Decision d;
  size_t expired = 0;
  for (const auto& [expires_at_ms, job_id] : s.jobs.expiries) {
    if (expires_at_ms > ctx.now_ms || expired == kExpiriesPerCommandMax) break;
    const Job* j = detail::find_job(s, job_id);
    if (j == nullptr) continue;
    expire_one(d, *j, ctx);
    ++expired;
  }
  return d;
}

}  // namespace runledger::jobs
