// State digests and invariant checks: see state_digest.h.
#include "tests/engine/state_digest.h"

#include <map>
#include <vector>

#include "base/sha256.h"

namespace runledger::testing {
namespace {

using nlohmann::json;

constexpr size_t kDifferenceCharsMax = 4000;

json job_indexes(const jobs::JobsState& js) {
  json ready = json::array();
  for (const auto& k : js.ready) ready.push_back({k.priority, k.enqueue_seq, k.job_id});
  json expiries = json::array();
  for (const auto& [at_ms, id] : js.expiries) expiries.push_back({at_ms, id});
  std::map<std::string, std::string> holder(js.holder.begin(), js.holder.end());
  return {{"ready", ready},
          {"holder", holder},
          {"expiries", expiries},
          {"count_by_state", js.count_by_state}};
}

json hold_indexes(const holds::HoldsState& hs) {
  return {{"blocking_by_target", hs.blocking_by_target},
          {"recovery_by_target", hs.recovery_by_target},
          {"open_by_kind", hs.open_by_kind}};
}

json connector_indexes(const connectors::ConnectorsState& cs) {
  json slots = json::array();
  for (const auto& [at_ms, id] : cs.slots) slots.push_back({at_ms, id});
  return {{"slots", slots}};
}

}  // namespace

json state_digest(const State& s) {
  json jobs_out = json::object();
  for (const auto& [id, j] : s.jobs.by_id) {
    jobs_out[id] = {{"model", jobs::to_json(j)}, {"view", jobs::view(s, j)}};
  }
  json connectors_out = json::object();
  for (const auto& [id, c] : s.connectors.by_id) {
    connectors_out[id] = {{"model", connectors::to_json(c)}, {"view", connectors::view(c)}};
  }
  json holds_out = json::object();
  for (const auto& [id, h] : s.holds.by_id) {
    holds_out[id] = {{"model", holds::to_json(h)}, {"view", holds::view(h)}};
  }
  return {{"last_seq", s.last_seq},
          {"last_hash", to_hex(s.last_hash)},
          {"jobs", jobs_out},
          {"connectors", connectors_out},
          {"holds", holds_out},
          {"job_indexes", job_indexes(s.jobs)},
          {"hold_indexes", hold_indexes(s.holds)},
          {"connector_indexes", connector_indexes(s.connectors)}};
}

json live_views(const State& s) {
  json out = json::object();
  for (const auto& [id, j] : s.jobs.by_id) out[job_stream(id)] = jobs::view(s, j);
  for (const auto& [id, c] : s.connectors.by_id) out[connector_stream(id)] = connectors::view(c);
  for (const auto& [id, h] : s.holds.by_id) out[hold_stream(id)] = holds::view(h);
  return out;
}

std::string describe_difference(const json& a, const json& b) {
  std::string text = json::diff(a, b).dump();
  if (text.size() > kDifferenceCharsMax) text = text.substr(0, kDifferenceCharsMax) + "...";
  return text;
}

::testing::AssertionResult same_state(const json& expected, const json& actual) {
  if (expected == actual) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "states differ: " << describe_difference(expected, actual);
}

std::string one_holder_per_target_violation(const State& s) {
  std::map<std::string, std::vector<std::string>> holders;
  for (const auto& [id, j] : s.jobs.by_id) {
    for (const auto& a : j.attempts) {
      if (a.state == jobs::AttemptState::kLeased || a.state == jobs::AttemptState::kRunning) {
        holders[j.target].push_back(id + "#" + std::to_string(a.number));
      }
    }
  }
  std::string out;
  for (const auto& [target, list] : holders) {
    if (list.size() > 1) out += "target " + target + " held by " + json(list).dump() + "; ";
    auto it = s.jobs.holder.find(target);
    std::string indexed = it == s.jobs.holder.end() ? "" : it->second;
    if (list.size() == 1 && list[0].rfind(indexed + "#", 0) != 0) {
      out += "target " + target + ": holder index says '" + indexed + "', attempts say " + list[0] +
             "; ";
    }
  }
  for (const auto& [target, job] : s.jobs.holder) {
    if (!holders.count(target))
      out += "holder index names " + job + " for free target " + target + "; ";
  }
  return out;
}

}  // namespace runledger::testing
