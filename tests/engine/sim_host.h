// SimHost: the engine the simulation drives, in-process on a real RocksDB
// store in a temporary folder (tmpfs when the machine has one, so a million
// fsyncs cost memory copies, not disk flushes), behind a FaultyStore so the
// simulation can fail a write. The clock is a ManualClock and the engine's
// own timers are off: the simulation is the timer. restart() closes the
// engine and the store and opens both again on the same folder, the way a
// process restart does (snapshot + tail).
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include "engine/engine.h"
#include "tests/engine/engine_harness.h"
#include "tests/support/faulty_store.h"

namespace runledger::testing {

class SimHost {
 public:
  explicit SimHost(EngineOptions options);
  ~SimHost();
  SimHost(const SimHost&) = delete;
  SimHost& operator=(const SimHost&) = delete;

  // Shuts the engine down (final snapshot), closes the store, lets `down_ms`
  // pass, opens both again and records missed schedule slots, as runledgerd
  // does at start.
  void restart(int64_t down_ms);

  Engine& engine() { return *engine_; }
  FaultyStore& store() { return *store_; }
  const std::string& folder() const { return folder_; }

  // Runs `f(state)` on the sequencer and returns its result.
  template <typename F>
  auto read(F&& f) {
    return inspect(*engine_, std::forward<F>(f));
  }

  ManualClock clock;

 private:
  void open();
  void close();

  EngineOptions options_;
  std::string folder_;
  std::shared_ptr<FaultyStore> store_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace runledger::testing
