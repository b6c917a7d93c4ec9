// HttpCounters: what the HTTP layer counts for /metrics (docs/operations.md,
// Metrics): replies by status, authentication failures, connections and
// requests refused for want of room, requests dropped because their client
// had gone, and the reply bytes not yet taken by their clients. Also the
// warning lines for those refusals, at most one per kind every 10 s, each
// saying how many happened since the last.
// Thread-safe (atomics; the loop and the pool count alike).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace runledger::http {

class HttpCounters {
 public:
  enum class Refusal : uint8_t {
    kConnections,        // over connections_max: answered 503 or closed at once
    kQueue,              // the blocking pool's queue full
    kReplyBytes,         // over the reply bytes budget
    kAuthentication,     // 401: no token, or an unknown one
    kForbidden,          // 403: a role that may not make the call
    kClientConnections,  // one address holds its most connections: closed at once
    kClientStreams,      // one address holds its most live streams: 503
  };
  static constexpr size_t kRefusals = 7;

  void reply(int status);
  // Counts the refusal and logs a warning line when none was logged for
  // this kind in the last 10 s.
  void refused(Refusal why);
  void dropped() { dropped_.fetch_add(1, std::memory_order_relaxed); }

  // Reply bytes written since the last release after which, once no reply
  // is in flight, the free memory is given back.
  static constexpr size_t kReplyBytesBeforeRelease = size_t{64} << 20;

  // Reply bytes handed to sockets and not yet written.
  void add_reply_bytes(size_t n) {
    reply_bytes_.fetch_add(n, std::memory_order_relaxed);
    since_release_.fetch_add(n, std::memory_order_relaxed);
  }
  // True, once, when `n` were the last bytes in flight and at least
  // `release_after` were written since the last time it said so: the
  // moment to give the memory of a burst of replies back (base/free_memory.h).
  bool sub_reply_bytes(size_t n, size_t release_after) {
    if (reply_bytes_.fetch_sub(n, std::memory_order_acq_rel) != n) return false;
    size_t since = since_release_.load(std::memory_order_relaxed);
    while (since >= release_after) {
      if (since_release_.compare_exchange_weak(since, 0, std::memory_order_relaxed)) return true;
    }
    return false;
  }
  size_t reply_bytes() const { return reply_bytes_.load(std::memory_order_relaxed); }

  // The counters in the Prometheus text format.
  std::string metrics_text() const;

 private:
  static constexpr int kStatusFirst = 100;
  static constexpr int kStatusLast = 599;
  std::array<std::atomic<uint64_t>, kStatusLast - kStatusFirst + 1> by_status_{};
  std::array<std::atomic<uint64_t>, kRefusals> refusals_{};
  std::array<std::atomic<uint64_t>, kRefusals> unlogged_{};
  std::array<std::atomic<int64_t>, kRefusals> last_logged_ms_{};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<size_t> reply_bytes_{0};
  std::atomic<size_t> since_release_{0};
};

}  // namespace runledger::http
