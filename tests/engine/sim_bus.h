// What the simulation's actors (workers, operators, sync loops) see of the
// world: a seeded random source, a way to send the engine a command and get
// its reply, a way to read the engine's state (as the API's replies and
// views would show it), and a way to report a broken expectation. Every
// per-command check runs inside send(), so actors only decide what to do.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/command.h"
#include "tests/engine/sim_host.h"

namespace runledger::testing {

// Every decision of the simulation comes from here, one seed per run.
class SimRandom {
 public:
  explicit SimRandom(uint64_t seed) : rng_(seed) {}
  bool chance(int percent) { return static_cast<int>(rng_() % 100) < percent; }
  bool chance_per_mille(int per_mille) { return static_cast<int>(rng_() % 1000) < per_mille; }
  size_t below(size_t n) { return n == 0 ? 0 : rng_() % n; }
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  template <typename T>
  const T& one_of(const std::vector<T>& v) {
    return v[below(v.size())];
  }
  // A fresh 32-hex-digit lease token.
  std::string token() { return lease_token(std::to_string(rng_())); }
  uint64_t next() { return rng_(); }

 private:
  std::mt19937_64 rng_;
};

// The status of a command whose write the simulation made fail.
inline constexpr int kInjectedWriteFailure = 503;

// A command's reply as an actor reads it.
struct Sent {
  int status = 0;
  std::string code;                 // the error code of a refusal
  std::string message;              // the error message of a refusal
  nlohmann::json body;              // the decision's body of an accepted command
  nlohmann::json error;             // the whole error JSON of a refusal
  std::vector<std::string> events;  // types of the events it recorded
  bool ok() const { return status == 200; }
};

class SimBus {
 public:
  virtual ~SimBus() = default;
  // Sends `c` as `actor`, runs every per-command check, returns the reply.
  virtual Sent send(const Command& c, const std::string& actor) = 0;
  // Records an expectation an actor found broken (stops the run).
  virtual void fail(const std::string& what) = 0;
  virtual SimRandom& random() = 0;
  virtual SimHost& host() = 0;
  int64_t now_ms() { return host().clock.now_ms(); }
};

}  // namespace runledger::testing
