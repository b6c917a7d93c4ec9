#include "http/http_counters.h"

#include "engine/log.h"

namespace runledger::http {
namespace {

constexpr int64_t kWarnEveryMs = 10'000;

struct RefusalText {
  std::string_view label;
  std::string_view warning;
};
constexpr std::array<RefusalText, HttpCounters::kRefusals> kRefusalTexts{{
    {"connections", "connections refused: the server is at its connection limit"},
    {"queue", "requests refused: the queue of requests that wait is full"},
    {"reply_bytes", "reads refused: the replies not yet taken by their clients are over budget"},
    {"authentication", "requests refused for a missing or unknown bearer token"},
    {"forbidden", "requests refused: the token's role may not make them"},
    {"client_connections",
     "connections closed: one client address holds its most (--connections-per-client-max)"},
    {"client_streams",
     "live streams refused: one client address holds its most (--live-streams-per-client-max)"},
}};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void HttpCounters::reply(int status) {
  if (status < kStatusFirst || status > kStatusLast) return;
  by_status_[static_cast<size_t>(status - kStatusFirst)].fetch_add(1, std::memory_order_relaxed);
}

void HttpCounters::refused(Refusal why) {
  const auto i = static_cast<size_t>(why);
  refusals_[i].fetch_add(1, std::memory_order_relaxed);
  const uint64_t pending = unlogged_[i].fetch_add(1, std::memory_order_relaxed) + 1;
  const int64_t now = now_ms();
  int64_t last = last_logged_ms_[i].load(std::memory_order_relaxed);
  // One thread wins the line for this window; the others only count.
  if ((last == 0 || now - last >= kWarnEveryMs) &&
      last_logged_ms_[i].compare_exchange_strong(last, now, std::memory_order_relaxed)) {
    unlogged_[i].fetch_sub(pending, std::memory_order_relaxed);
    log::warn("{} ({} since the last such line)", kRefusalTexts[i].warning, pending);
  }
}

std::string HttpCounters::metrics_text() const {
  std::string out =
      "# HELP runledger_http_replies_total HTTP replies sent, by status.\n"
      "# TYPE runledger_http_replies_total counter\n";
  for (size_t i = 0; i < by_status_.size(); ++i) {
    const uint64_t n = by_status_[i].load(std::memory_order_relaxed);
    if (n == 0) continue;
    out += "runledger_http_replies_total{status=\"" + std::to_string(kStatusFirst + i) + "\"} " +
           std::to_string(n) + "\n";
  }
  out +=
      "# HELP runledger_http_refused_total Connections and requests refused, by reason.\n"
      "# TYPE runledger_http_refused_total counter\n";
  for (size_t i = 0; i < kRefusals; ++i) {
    out += "runledger_http_refused_total{reason=\"" + std::string(kRefusalTexts[i].label) + "\"} " +
           std::to_string(refusals_[i].load(std::memory_order_relaxed)) + "\n";
  }
  out +=
      "# HELP runledger_http_dropped_total Requests not run because their client had gone.\n"
      "# TYPE runledger_http_dropped_total counter\n"
      "runledger_http_dropped_total " +
      std::to_string(dropped_.load(std::memory_order_relaxed)) +
      "\n# HELP runledger_http_reply_bytes Reply bytes handed to sockets and not yet taken.\n"
      "# TYPE runledger_http_reply_bytes gauge\n"
      "runledger_http_reply_bytes " +
      std::to_string(reply_bytes()) + "\n";
  return out;
}

}  // namespace runledger::http
