// The idempotency records (engine/idempotency.h) of the two batches that are
// not in the store yet: the batch being decided and the batch with the
// writer. A request that repeats a key while the batch of its first use is
// still unwritten must find that first reply here, for the store does not
// have it yet; once the writer's batch is settled its records are the
// store's (or, when its write failed, gone with it).
//
// Thread-compatible: the engine's sequencer keeps it, under its state lock.
#pragma once

#include <string>
#include <unordered_map>

namespace runledger {

class UnwrittenIdempotency {
 public:
  // Keeps `record` under `record_key` for the batch being decided.
  void keep(std::string record_key, std::string record);
  // The record under `record_key` in the batch being decided, else in the
  // batch with the writer; nullptr in neither. Valid until the next change.
  const std::string* find(const std::string& record_key) const;
  // The batch being decided went to the writer: its records go with it, and
  // the next batch starts with none.
  void hand_over();
  // The writer's batch is settled: its records are the store's now, or
  // were lost with its failed write.
  void writer_settled() { writing_.clear(); }
  // The batch being decided was dropped undecided (refused with a failed
  // write before it).
  void drop_deciding() { deciding_.clear(); }

 private:
  using Records = std::unordered_map<std::string, std::string>;
  Records deciding_;
  Records writing_;
};

}  // namespace runledger
