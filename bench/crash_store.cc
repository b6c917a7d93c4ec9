// CrashStore: see crash_store.h.
#include "bench/crash_store.h"

namespace runledger::bench {

Status CrashStore::append(const AppendBatch& batch) {
  bool snapshot_only =
      batch.snapshot && batch.events.empty() && batch.idempotency.empty() && batch.views.empty();
  if (crashed_ && snapshot_only) return Status::Ok();
  return ForwardingStore::append(batch);
}

}  // namespace runledger::bench
