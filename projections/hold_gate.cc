// The start gate (docs/domain.md section 3): may new work start on a target, and
// every reason it may not. Scripts that are not engine workers ask it before
// they start, so it names each cause (an open blocking hold, an attempt that
// holds the target) rather than a bare no. Open RESULT_UNKNOWN holds do not
// block; they are listed apart as needing recovery.
#include "projections/state.h"

namespace runledger::holds {

namespace {

using Json = nlohmann::json;

const Hold* find_hold(const State& s, const std::string& id) {
  auto it = s.holds.by_id.find(id);
  return it != s.holds.by_id.end() ? &it->second : nullptr;
}

const std::set<std::string>* ids_on(const std::map<std::string, std::set<std::string>>& index,
                                    const std::string& target) {
  auto it = index.find(target);
  return it != index.end() ? &it->second : nullptr;
}

Json hold_reasons(const State& s, const std::string& target) {
  Json reasons = Json::array();
  if (const auto* ids = ids_on(s.holds.blocking_by_target, target)) {
    for (const auto& id : *ids) {
      const Hold* h = find_hold(s, id);
      reasons.push_back(
          {{"code", "hold"}, {"hold", id}, {"kind", h ? h->kind : kExecutionStateUnknown}});
    }
  }
  return reasons;
}

// {"code": "attempt_active", ...} when an attempt holds the target, else null.
Json attempt_reason(const State& s, const std::string& target) {
  auto holder = s.jobs.holder.find(target);
  if (holder == s.jobs.holder.end()) return nullptr;
  Json reason = {{"code", "attempt_active"}, {"job", holder->second}, {"state", nullptr}};
  auto job = s.jobs.by_id.find(holder->second);
  if (job != s.jobs.by_id.end() && !job->second.attempts.empty()) {
    reason["state"] = jobs::to_string(job->second.latest().state);
  }
  return reason;
}

Json recovery_needed(const State& s, const std::string& target) {
  Json out = Json::array();
  if (const auto* ids = ids_on(s.holds.recovery_by_target, target)) {
    for (const auto& id : *ids) {
      const Hold* h = find_hold(s, id);
      out.push_back({{"hold", id}, {"kind", h ? h->kind : kResultUnknown}});
    }
  }
  return out;
}

}  // namespace

const Hold* blocking_hold(const State& s, const std::string& target) {
  const auto* ids = ids_on(s.holds.blocking_by_target, target);
  if (ids == nullptr || ids->empty()) return nullptr;
  return find_hold(s, *ids->begin());
}

nlohmann::json gate(const State& s, const std::string& target) {
  Json reasons = hold_reasons(s, target);
  Json active = attempt_reason(s, target);
  if (!active.is_null()) reasons.push_back(std::move(active));
  const bool may_start = reasons.empty();
  return {{"target", target},
          {"may_start", may_start},
          {"reasons", std::move(reasons)},
          {"recovery_needed", recovery_needed(s, target)}};
}

}  // namespace runledger::holds
