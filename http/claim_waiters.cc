#include "http/claim_waiters.h"

#include <unordered_set>
#include <vector>

namespace runledger::http {

ClaimWaiters::ClaimWaiters(boost::asio::io_context& io, Engine& engine, size_t max)
    : timer_(io), engine_(engine), max_(max) {}

uint64_t ClaimWaiters::park(std::string group, Clock::time_point deadline, Callbacks callbacks) {
  if (stopped_ || entries_.size() >= max_) return 0;
  if (entries_.empty()) {
    // What is in the log now was seen by the claim that found nothing.
    seen_seq_ = engine_.store().last_seq();
    last_wake_ = Clock::now();
  }
  const uint64_t id = next_id_++;
  entries_.push_back(Entry{id, std::move(group), deadline, false, std::move(callbacks)});
  by_id_.emplace(id, std::prev(entries_.end()));
  counted();
  arm();
  return id;
}

bool ClaimWaiters::tried(uint64_t id, bool got_work) {
  auto found = by_id_.find(id);
  if (found == by_id_.end()) return false;
  Entry& e = *found->second;
  e.trying = false;
  if (!got_work && Clock::now() < e.deadline && !stopped_) return true;
  const std::string group = e.group;
  entries_.erase(found->second);
  by_id_.erase(found);
  counted();
  // A job went to this claim: there may be one for the next of its group.
  if (got_work) wake_group(group);
  return false;
}

void ClaimWaiters::stop() {
  stopped_ = true;
  timer_.cancel();
  Entries waiting;
  waiting.swap(entries_);
  by_id_.clear();
  counted();
  for (Entry& e : waiting) {
    if (!e.trying) e.callbacks.give_up();
  }
}

std::string ClaimWaiters::metrics_text() const {
  return "# HELP runledger_claims_waiting Claims (POST /v1/jobs/claim with wait_s) waiting for "
         "work now.\n"
         "# TYPE runledger_claims_waiting gauge\n"
         "runledger_claims_waiting " +
         std::to_string(waiting_now()) + "\n";
}

void ClaimWaiters::arm() {
  if (armed_ || entries_.empty() || stopped_) return;
  armed_ = true;
  timer_.expires_after(std::chrono::milliseconds(kPollMs));
  timer_.async_wait([this](boost::system::error_code ec) {
    armed_ = false;
    if (ec || stopped_) return;
    on_timer();
    arm();
  });
}

void ClaimWaiters::on_timer() {
  const Clock::time_point now = Clock::now();
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->deadline > now || it->trying) {
      ++it;
      continue;
    }
    Callbacks callbacks = std::move(it->callbacks);
    by_id_.erase(it->id);
    it = entries_.erase(it);
    counted();
    callbacks.give_up();
  }
  const uint64_t seq = engine_.store().last_seq();
  if (seq != seen_seq_ || now - last_wake_ >= std::chrono::milliseconds(kRetryEveryMs)) {
    seen_seq_ = seq;
    last_wake_ = now;
    wake_all();
  }
}

void ClaimWaiters::wake_all() {
  // Chosen first and tried after: a claim tried may be answered at once,
  // and that changes entries_.
  std::unordered_set<std::string> seen;
  std::vector<uint64_t> chosen;
  for (const Entry& e : entries_) {
    // The oldest of each group; one already being tried wakes the next itself.
    if (seen.insert(e.group).second && !e.trying) chosen.push_back(e.id);
  }
  for (uint64_t id : chosen) try_entry(id);
}

void ClaimWaiters::wake_group(const std::string& group) {
  for (const Entry& e : entries_) {
    if (e.group != group) continue;
    if (!e.trying) try_entry(e.id);
    return;
  }
}

void ClaimWaiters::try_entry(uint64_t id) {
  auto found = by_id_.find(id);
  if (found == by_id_.end() || found->second->trying) return;
  found->second->trying = true;
  // Copied: an answer made at once (a refusal on the loop) calls tried(),
  // which may erase the entry while this runs.
  std::function<void()> try_again = found->second->callbacks.try_again;
  try_again();
}

}  // namespace runledger::http
