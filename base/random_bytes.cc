#include "base/random_bytes.h"

#include "base/sha256.h"

#include <openssl/rand.h>
#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>

namespace runledger {
namespace {

// Bumped in a forked child: each thread's pool drawn before it is dropped.
std::atomic<uint64_t> forks_seen{0};

void count_fork() { forks_seen.fetch_add(1, std::memory_order_relaxed); }

struct Pool {
  std::array<unsigned char, kRandomPoolBytes> bytes{};
  size_t used = kRandomPoolBytes;  // empty until first drawn
  uint64_t forks = 0;
};

void refill(Pool& p) {
  if (RAND_bytes(p.bytes.data(), static_cast<int>(p.bytes.size())) != 1) {
    throw std::runtime_error("no randomness available");
  }
  p.used = 0;
}

}  // namespace

void random_bytes(std::span<unsigned char> out) {
  static std::once_flag watch_forks;
  std::call_once(watch_forks, [] { pthread_atfork(nullptr, nullptr, count_fork); });
  thread_local Pool pool;
  const uint64_t forks = forks_seen.load(std::memory_order_relaxed);
  if (pool.forks != forks) {
    pool.forks = forks;
    pool.used = kRandomPoolBytes;
  }
  size_t done = 0;
  while (done < out.size()) {
    if (pool.used == pool.bytes.size()) refill(pool);
    const size_t n = std::min(out.size() - done, pool.bytes.size() - pool.used);
    std::copy_n(pool.bytes.data() + pool.used, n, out.data() + done);
    pool.used += n;
    done += n;
  }
}

std::string random_hex(size_t bytes) {
  std::array<unsigned char, 64> buf;
  if (bytes > buf.size()) throw std::invalid_argument("random_hex: at most 64 bytes");
  random_bytes(std::span(buf.data(), bytes));
  return to_hex(buf.data(), bytes);
}

}  // namespace runledger
