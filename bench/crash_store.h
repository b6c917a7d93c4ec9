// CrashStore: an EventStore that forwards everything to the real one until
// crash() is called; after that it drops the appends that carry nothing but
// a snapshot. The engine writes such a snapshot on a clean shutdown, which
// would leave nothing to replay; a server killed with -9 never writes it, so
// the next start folds the last periodic snapshot plus the tail after it.
// That is the start the restart workload times.
#pragma once

#include <atomic>
#include <memory>

#include "events/forwarding_store.h"

namespace runledger::bench {

class CrashStore final : public ForwardingStore {
 public:
  explicit CrashStore(std::unique_ptr<EventStore> inner) : ForwardingStore(std::move(inner)) {}
  void crash() { crashed_ = true; }

  Status append(const AppendBatch& batch) override;

 private:
  std::atomic<bool> crashed_{false};
};

}  // namespace runledger::bench
